"""A typed, read-only view of a report.json, shared by everything that reads reports.

``Report.from_json`` accepts only a document that validates against the report schema of a
standard this kit knows, then types every field the checks need: timestamps become aware
datetimes, records ``TestRecord``s, skip entries ``SkipEntry``s. A document it cannot read that
way raises ``ReportError`` with one line; consumers never re-check shapes.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import math
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from kit.clock import RunDate
from kit.errors import VerificationError
from kit.report.attribution_summary import (
    AttributionTotals,
    GatheredDispatches,
    gather_dispatches,
)
from kit.report.flow_summary import FlowTotals
from kit.report.schema import schema_problem
from kit.report.summary import Summary, tier_status_counts
from kit.results import RecordFields, Status, TestRecord, tier_of
from kit.vendors import SkipEntry, SkipManifest, VendorInfo

_ID = operator.attrgetter("id")
_R = TypeVar("_R", bound=RecordFields)
_TO_RECORD = operator.methodcaller("to_record")


class ReportError(VerificationError):
    """report.json is not a well-formed, self-consistent report; ``str()`` is one line."""


@dataclass(frozen=True)
class KitInfo:
    version: str
    #: The kit digest (``kit.hashing.kit_digest``) of the checkout that ran the tests.
    digest: str
    torch_release: str
    #: What the report claims: whether ``digest`` is a released kit's.
    released: bool


@dataclass(frozen=True)
class StandardRef:
    version: str
    torch_release: str


@dataclass(frozen=True)
class ShardRef:
    """``run.shard``: which part of a sharded run a report holds."""

    index: int
    count: int
    balance: str
    durations_sha256: str | None
    tests: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass(frozen=True)
class RunScope:
    """What a run set out to cover, and whether it says it covered the standard: what grading
    judges completeness, missing tests and the incomplete-run violation by."""

    tiers: tuple[str, ...]
    select: tuple[str, ...]
    #: On a ``--shard`` run, its part's tests and ``index/count``; None otherwise.
    shard_tests: frozenset[str] | None = None
    shard_label: str | None = None
    #: The run's ``complete`` claim; None while the report is being built (not yet judged).
    complete: bool | None = None

    @classmethod
    def of_run(cls, run: Mapping[str, Any]) -> RunScope:
        """The scope of a ``run`` section as the runner hands it to the report's builder."""
        shard = run.get("shard")
        if not isinstance(shard, Mapping):
            return cls(tuple(run.get("tiers", ())), tuple(run.get("select") or ()),
                       complete=run.get("complete"))
        return cls(tuple(run.get("tiers", ())), tuple(run.get("select") or ()),
                   frozenset(shard["tests"]), f"{shard.get('index')}/{shard.get('count')}",
                   run.get("complete"))


@dataclass(frozen=True)
class RunInfo:
    tiers: tuple[str, ...]
    select: tuple[str, ...]
    complete: bool
    started_at: dt.datetime
    finished_at: dt.datetime
    #: The date skip-manifest expiry was judged on.
    today: dt.date
    #: The system clock's date at the start, and whether ``CKIT_TODAY`` set ``today``.
    clock_today: dt.date
    clock_override: bool
    #: On a ``--shard`` run, its shard; None otherwise.
    shard: ShardRef | None = None
    #: ``started_at`` and ``finished_at`` as recorded: a merged report names each shard's by
    #: its own words, whatever precision they were written with.
    started_text: str = ""
    finished_text: str = ""
    #: ``--timeout`` as given (an integer stays one: report.json's bytes keep it).
    timeout_s: int | float | None = None
    workers: int = 1
    #: A ``--canary`` run (never a certificate).
    canary: bool = False

    def scope(self) -> RunScope:
        shard = self.shard
        return RunScope(self.tiers, self.select,
                        None if shard is None else frozenset(shard.tests),
                        None if shard is None else str(shard), self.complete)

    def run_date(self) -> RunDate:
        """The run's dates as the run took them (``RunDate.from_json``'s checks included)."""
        return RunDate.from_json({"today": self.today.isoformat(),
                                  "clock_today": self.clock_today.isoformat(),
                                  "clock_override": self.clock_override})


@dataclass(frozen=True)
class ClaimedGrade:
    name: str
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class UnaccountedTest:
    """One of ``unaccounted``: a test the grade counts as failed without a failing record."""

    test: str
    #: The record's status, or ``MISSING``.
    status: str
    why: str


@dataclass(frozen=True)
class Report:
    #: The validated document itself, for the code that takes report sections as mappings.
    document: Mapping[str, Any]
    kit: KitInfo
    standard: StandardRef
    vendor_id: str
    run: RunInfo
    environment: Mapping[str, Any]
    skips: SkipManifest
    #: The records as read, what grading reads: a report.json's ``TestRecord``s, or a body's
    #: records as decoded (``kit.report.body.BodyRecord``), typed only when ``records`` is
    #: asked for.
    read_records: tuple[RecordFields, ...]
    missing: tuple[str, ...]
    violations: tuple[Mapping[str, str], ...]
    summary: Summary
    grade: ClaimedGrade
    vendor: VendorInfo
    #: ``skip_manifest.path``: the manifest's path as the run named it (None: no file).
    skip_path: str | None
    #: Tests without an accepted result (a report of a kit before ``unaccounted``: none).
    unaccounted: tuple[UnaccountedTest, ...] = ()

    @property
    def flows(self) -> Mapping[str, FlowTotals]:
        """Per flow, the totals of ``summary.flows`` (the flows tier and models through flows)."""
        return self.summary.flows

    @property
    def attribution(self) -> AttributionTotals | None:
        """``summary.attribution``: where the device calls ran their ops (None: not recorded)."""
        return self.summary.attribution

    @functools.cached_property
    def records(self) -> tuple[TestRecord, ...]:
        """The records as ``TestRecord``s, made on first ask (a verifier's grading reads
        ``read_records``: a whole run's typed copy is made for a reader that wants one)."""
        return tuple(map(_TO_RECORD, self.read_records))

    @functools.cached_property
    def recorded_ids(self) -> frozenset[str]:
        """The ids of the records, made once: the regrade's checks each ask for them."""
        return frozenset(map(_ID, self.read_records))

    @functools.cached_property
    def tier_status_counts(self) -> Mapping[tuple[str, Status], int]:
        """The records counted per (tier, status), made once: the regrade's summary and its
        grade's tier skips each ask for them."""
        return tier_status_counts(self.read_records)

    @functools.cached_property
    def gathered_dispatches(self) -> GatheredDispatches:
        """The records' dispatches gathered and counted once: verify's op-name check and the
        regrade's attribution totals each read them."""
        return gather_dispatches(self.read_records)

    @classmethod
    def from_json(cls, document: Any) -> Report:
        """Validate ``document`` (a parsed report.json) and read it; ``ReportError`` if not."""
        problem = schema_problem(document)
        if problem is not None:
            raise ReportError(problem)
        return cls._typed(document)

    @classmethod
    def from_body(cls, head: Mapping[str, Any], records: Sequence[RecordFields],
                  document: Mapping[str, Any]) -> Report:
        """A ``body``-format report: ``head`` (the document less its records) validated against
        the schema; ``records`` already read typed (``kit.report.body.BodyRecord``: the schema's
        fields, a status of the kit's, a finite duration), so only their uniqueness is
        checked here; ``document``: head and records as one document (``Body.report_document``);
        ``ReportError`` if not."""
        return cls.of_head(head).with_body_records(records, document)

    @classmethod
    def of_head(cls, head: Mapping[str, Any]) -> Report:
        """A body's head alone, validated against the schema and typed, records none: what
        names and loads the standard before its records are read (``with_body_records``)."""
        problem = schema_problem({**head, "records": []})
        if problem is not None:
            raise ReportError(problem)
        return cls._typed({**head, "records": []})

    def with_body_records(self, records: Sequence[RecordFields], document: Mapping[str, Any]
                          ) -> Report:
        """This head's report with its records (read typed, as ``from_body`` takes them): the
        head is typed and validated once, not again with the records."""
        typed = tuple(records)
        report = dataclasses.replace(self, document=document, read_records=typed)
        if len(report.recorded_ids) != len(typed):
            _unique(typed)  # names the record that appears twice
        return report

    @classmethod
    def from_checked_head(cls, head: Mapping[str, Any]) -> Report:
        """The head of a body whose content checks passed (a recorded verdict: the head's bytes
        are the checked ones, by their signed digest), typed without its records and without
        validating again: for readers of the claims only (an audit's path, policy, key)."""
        return cls._typed({**head, "records": []})

    @classmethod
    def _typed(cls, document: Mapping[str, Any],
               records: tuple[RecordFields, ...] | None = None) -> Report:
        return cls(
            document=document,
            kit=_kit(document["kit"]),
            standard=StandardRef(document["standard"]["version"],
                                 document["standard"]["torch_release"]),
            vendor_id=document["vendor"]["id"],
            vendor=VendorInfo.from_json(document["vendor"]),
            run=_run(document["run"]),
            environment=document["environment"],
            skips=_skips(document["skip_manifest"]),
            skip_path=document["skip_manifest"]["path"],
            unaccounted=tuple(UnaccountedTest(e["test"], e["status"], e["why"])
                              for e in document.get("unaccounted", ())),
            read_records=_records(document["records"]) if records is None else records,
            missing=tuple(document["missing"]),
            violations=tuple(document["policy"]["violations"]),
            summary=Summary.from_json(document["summary"]),
            grade=ClaimedGrade(document["grade"]["name"], tuple(document["grade"]["reasons"])),
        )


def _kit(section: Mapping[str, Any]) -> KitInfo:
    return KitInfo(section["version"], section["digest"], section["torch_release"],
                   section["released"])


def _timestamp(value: str, field: str) -> dt.datetime:
    try:
        moment = dt.datetime.fromisoformat(value)
    except ValueError:
        raise ReportError(f"{field} {value[:40]!r} is not an ISO 8601 timestamp") from None
    if moment.tzinfo is None:
        raise ReportError(f"{field} {value[:40]!r} has no UTC offset; it names no moment")
    return moment


def _date(value: str, field: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise ReportError(f"{field} {value!r} is not a real date") from None


def _run(section: Mapping[str, Any]) -> RunInfo:
    return RunInfo(
        tiers=tuple(section["tiers"]),
        select=tuple(section["select"]),
        complete=section["complete"],
        started_at=_timestamp(section["started_at"], "run.started_at"),
        finished_at=_timestamp(section["finished_at"], "run.finished_at"),
        today=_date(section["today"], "run.today"),
        shard=_shard(section.get("shard")),
        started_text=section["started_at"],
        finished_text=section["finished_at"],
        timeout_s=section["timeout_s"],
        workers=section["workers"],
        clock_today=_date(section["clock_today"], "run.clock_today"),
        clock_override=section["clock_override"],
        canary=section.get("canary") is True,
    )


def _shard(section: Mapping[str, Any] | None) -> ShardRef | None:
    if section is None:
        return None
    if section["index"] >= section["count"]:
        raise ReportError(f"run.shard: index {section['index']} is not below count "
                          f"{section['count']}")
    return ShardRef(
        index=section["index"],
        count=section["count"],
        balance=section["balance"],
        durations_sha256=section["durations_sha256"],
        tests=tuple(section["tests"]),
    )


def _skips(section: Mapping[str, Any]) -> SkipManifest:
    entries = tuple(
        SkipEntry(
            test=entry["test"],
            reason=entry["reason"],
            tracking=entry["tracking"],
            expires=_date(entry["expires"], f"skip_manifest.entries.{index}.expires"),
            note=entry["note"],
        )
        for index, entry in enumerate(section["entries"])
    )
    return SkipManifest(entries=entries, sha256=section["sha256"] or "")


def _duration(value: int | float, test_id: str) -> float:
    # The schema takes any JSON number; a 400-digit integer is one, and float() overflows on it.
    try:
        duration = float(value)
    except OverflowError:
        duration = math.inf
    if not math.isfinite(duration):
        raise ReportError(f"record {test_id!r}: duration_s is too large to be finite")
    return duration


def _record(data: Mapping[str, Any]) -> TestRecord:
    test_id = data["id"]
    if data["tier"] != tier_of(test_id):
        raise ReportError(f"record {test_id!r} is filed under tier {data['tier']!r}")
    return TestRecord(
        id=test_id,
        status=Status(data["status"]),
        duration_s=_duration(data["duration_s"], test_id),
        message=data["message"],
        details=dict(data["details"]),
    )


def _records(items: list[Mapping[str, Any]]) -> tuple[TestRecord, ...]:
    return _unique(tuple(_record(item) for item in items))


def _unique(records: tuple[_R, ...]) -> tuple[_R, ...]:
    if len({record.id for record in records}) == len(records):
        return records
    seen: set[str] = set()
    for record in records:
        if record.id in seen:
            # One record per test: two would make every count ambiguous.
            raise ReportError(f"record {record.id!r} appears twice")
        seen.add(record.id)
    return records
