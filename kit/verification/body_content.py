"""The content checks of a ``body``-format report, steps 8-12 of its checklist
(``kit.verification.verify_body``): whether what was signed holds up.

They read megabytes (every record typed, the grade derived again), so they run once per signed
payload (``kit.verification.content_cache`` records the verdict), never on a body whose
digests were not checked against the signed statement first.

8. the body reads strictly (``kit.report.body.decode_body``: typed, canonical, so no duplicate
   key) and its head makes the statement's claim (vendor, display name, standard, kit, finish)
9. the report names a standard this kit knows, which declares the ``body`` format; its head
   validates against the standard's report schema and every record has a status of the
   standard, its own tier and a test id of it; ``details.dispatch`` names only operators
10. the kit that judged the run is a released one, or the report says plainly it is not
11. the run's times are consistent
12. coverage, completeness, violations, summary, suspects and grade, derived again from the
    records and the standard, are what the report claims
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import NoReturn

from kit.errors import VerificationError
from kit.grading.regrade import check_grade
from kit.grading.released import ReleasedKit
from kit.report.body import Body, RecordLine, WrittenBody, decode_body
from kit.report.model import Report
from kit.results import NA_REASON_KEY
from kit.rundir import REPORT_HEAD, REPORT_JSON
from kit.signing.body_statement import BodyClaim
from kit.standard import BODY_FORMAT, Standard
from kit.tiers.registry import tier_names
from kit.verification.body_records import records_sound
from kit.verification.content import (
    check_op_names,
    check_run_times,
    kit_standing,
    report_standard,
)


@dataclass(frozen=True)
class ContentVerdict:
    """What the content checks found: passed (with the grade and notes) or the first problem."""

    passed: bool
    #: ``step N: ...``, one line; empty when passed.
    problem: str
    grade: str
    notes: tuple[str, ...]
    #: Whether steps 8-11 passed, so that the report was read typed (only the grade, step
    #: 12, can have failed).
    typed: bool = False
    #: Checks a reader ran on the typed report beside these steps, recorded with them (the
    #: audit's required tests and skip policy): (number, passed, why) each.
    checks: tuple[tuple[int, bool, str], ...] = ()


def _fail(step: int, message: str) -> NoReturn:
    raise VerificationError(f"step {step}: {message}")


def step8_read_body(files: Mapping[str, bytes], claim: BodyClaim) -> WrittenBody:
    """The body, read strictly, its head the claim; as written where a record's status is not
    one of the kit's (step 9 names the first record it refuses)."""
    try:
        body = decode_body(files)
    except VerificationError as exc:
        _fail(8, str(exc))
    try:
        said = BodyClaim.of_head(body.head)
    except (KeyError, TypeError):
        _fail(8, f"{REPORT_HEAD} lacks kit, vendor, standard or run")
    if said != claim:
        field = next(name for name in claim.__dataclass_fields__
                     if getattr(said, name) != getattr(claim, name))
        _fail(8, f"{REPORT_HEAD} says {field} {str(getattr(said, field))[:60]!r}, the signed "
                 f"statement {str(getattr(claim, field))[:60]!r}")
    return body


def _record_problem(record: RecordLine, statuses: frozenset[str], tiers: frozenset[str]
                    ) -> str | None:
    """What the report schema says of one record beyond its fields' types (``RecordLine``)."""
    if record.status not in statuses:
        return f"record {record.id[:80]!r}: status {record.status[:40]!r} is not one of the " \
               "standard's"
    if record.tier not in tiers or not record.id.startswith(f"{record.tier}/") \
            or record.id[len(record.tier) + 1:][:1] in ("", "/"):
        return f"record {record.id[:80]!r} is not a test id of tier {record.tier[:40]!r}"
    reason = record.details.get(NA_REASON_KEY)
    if reason is not None and not isinstance(reason, str):
        return f"record {record.id[:80]!r}: details.na_reason is not a string"
    return None


def _sound_body(body: WrittenBody, standard: Standard) -> Body:
    """The body whose every record holds what ``_record_problem`` asks (asked of all at once,
    ``records_sound``, where their statuses are the kit's); else ``VerificationError`` in its
    words for the first record it refuses."""
    tiers = frozenset(tier_names())
    if isinstance(body, Body) and records_sound(body.records, standard.statuses, tiers):
        return body
    statuses = frozenset(status.value for status in standard.statuses)
    problem = next(filter(None, (_record_problem(record, statuses, tiers)
                                 for record in body.records)), None)
    if problem is None and isinstance(body, Body):
        return body  # not in a report's order, each record sound
    raise VerificationError(problem or "a record's status is not one of the kit's")


def _read_typed(body: WrittenBody) -> tuple[Report, Standard]:
    """Step 9's reading; ``VerificationError`` without the step (step 9 names it)."""
    head = Report.of_head(body.head)  # enough to name and load the standard
    standard = report_standard(head)
    if standard.report_format != BODY_FORMAT:
        raise VerificationError(
            f"standard {standard.version} declares the {standard.report_format} format; its "
            f"reports are {REPORT_JSON} and the files it renders")
    sound = _sound_body(body, standard)
    report = head.with_body_records(sound.records, sound.report_document())
    check_op_names(report)
    return report, standard


def step9_read_report(body: WrittenBody) -> tuple[Report, Standard]:
    try:
        return _read_typed(body)
    except VerificationError as exc:
        _fail(9, str(exc))


def _typed_and_standing(files: Mapping[str, bytes], claim: BodyClaim, now: dt.datetime,
                        released_kits: Sequence[ReleasedKit]
                        ) -> tuple[Report, Standard, tuple[str, ...]]:
    """Steps 8-11: the report typed, its standard, and the notes for the reader."""
    report, standard = step9_read_report(step8_read_body(files, claim))
    try:
        standing = kit_standing(report, released_kits)
    except VerificationError as exc:
        _fail(10, str(exc))
    try:
        check_run_times(report.run, now)
    except VerificationError as exc:
        _fail(11, str(exc))
    return report, standard, (standing.note,) if standing.note else ()


def check_body_content(
    files: Mapping[str, bytes],
    claim: BodyClaim,
    *,
    now: dt.datetime,
    released_kits: Sequence[ReleasedKit],
) -> tuple[ContentVerdict, Report | None]:
    """Steps 8-12 on the body files (their digests already checked against the statement):
    the verdict, and the typed report once steps 8-11 passed (a grade refused at 12 too)."""
    with _made_long_lived():
        try:
            report, standard, notes = _typed_and_standing(files, claim, now, released_kits)
        except VerificationError as exc:
            return ContentVerdict(False, str(exc), "", (), typed=False), None
        try:
            check_grade(report, standard)
        except VerificationError as exc:
            return ContentVerdict(False, f"step 12: {exc}", "", notes, typed=True), report
        return ContentVerdict(True, "", report.grade.name, notes, typed=True), report


@contextlib.contextmanager
def _made_long_lived() -> Iterator[None]:
    """What the checks make moved to the collector's oldest generation, unscanned, when they
    end: a whole run's typed report is about 100,000 containers, none in a cycle, and the
    first young collection after the checks would walk them all (about 13 ms, a tenth of the
    checks), the next generation's again. ``gc.freeze`` then ``gc.unfreeze`` move every
    tracked object there (documented: the frozen go back to the oldest generation), where a
    full collection still finds any cycle. Not where objects are frozen already (a kit child's
    start-up heap, ``kit.runner.heap``): those stay exempt."""
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
