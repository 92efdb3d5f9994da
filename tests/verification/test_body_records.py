"""Step 9 on a body's records: each record's status, tier, id and ``details.na_reason`` are
asked of all records at once, and the first record refused is named in the same words
(``kit.verification.body_content._record_problem``) whichever way it is found.

The body is checked in memory (``check_body_content`` on the files' bytes): no signing, since
steps 8-12 read only what the digests already vouched for.
"""

from __future__ import annotations

import copy
import datetime as dt
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from body_helpers import body_report  # noqa: E402

from kit.report.body import decode_body, encode_body  # noqa: E402
from kit.signing.body_statement import BodyClaim  # noqa: E402
from kit.verification.body_content import ContentVerdict, check_body_content  # noqa: E402


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return body_report()


def checked(report: dict[str, Any]) -> ContentVerdict:
    files = encode_body(report)
    claim = BodyClaim.of_head(decode_body(files).head)
    verdict, _ = check_body_content(files, claim, now=dt.datetime.now(dt.UTC),
                                    released_kits=())
    return verdict


def with_record(report: dict[str, Any], index: int, **changes: Any) -> dict[str, Any]:
    changed = copy.deepcopy(report)
    changed["records"][index].update(changes)
    return changed


def test_the_built_report_passes(report: dict[str, Any]) -> None:
    verdict = checked(report)
    assert verdict.passed, verdict.problem


@pytest.mark.parametrize(("changes", "words"), [
    ({"status": "PASSED"}, "status 'PASSED' is not one of the standard's"),
    ({"tier": "models"}, "is not a test id of tier 'models'"),
    ({"tier": "nowhere"}, "is not a test id of tier 'nowhere'"),
    ({"id": "unit"}, "'unit' is not a test id of tier 'unit'"),
    ({"id": "unit/"}, "'unit/' is not a test id of tier 'unit'"),
    ({"id": "unit//opinfo/add/float32/1"}, "is not a test id of tier 'unit'"),
    ({"id": "units/opinfo/add/float32/1"}, "is not a test id of tier 'unit'"),
    ({"details": {"na_reason": 3}}, "details.na_reason is not a string"),
    ({"details": {"na_reason": ["not-in-release"]}}, "details.na_reason is not a string"),
])
def test_a_refused_record_is_named_in_step_9(report: dict[str, Any], changes: dict[str, Any],
                                             words: str) -> None:
    index = len(report["records"]) // 2
    changed = with_record(report, index, **changes)
    verdict = checked(changed)
    record_id = changed["records"][index]["id"]
    assert not verdict.passed and verdict.problem.startswith(f"step 9: record {record_id!r}")
    assert words in verdict.problem, verdict.problem


def test_the_first_refused_record_is_the_one_named(report: dict[str, Any]) -> None:
    later = with_record(report, 3, status="BOGUS")
    both = with_record(later, 1, details={"na_reason": 7})
    first = both["records"][1]["id"]
    assert checked(both).problem == (f"step 9: record {first!r}: details.na_reason is not a "
                                     "string")


def test_a_record_twice_is_refused(report: dict[str, Any]) -> None:
    twice = copy.deepcopy(report)
    twice["records"].insert(1, copy.deepcopy(twice["records"][1]))
    assert checked(twice).problem == f"step 9: record {twice['records'][1]['id']!r} appears twice"


def test_the_typed_report_document_is_the_body_document(report: dict[str, Any]) -> None:
    files = encode_body(report)
    body = decode_body(files)
    verdict, typed = check_body_content(files, BodyClaim.of_head(body.head),
                                        now=dt.datetime.now(dt.UTC), released_kits=())
    assert verdict.passed and typed is not None
    assert dict(typed.document) == body.document()
    assert list(typed.document) == list(body.document())
    assert typed.document["records"] is typed.document["records"]  # made once
    assert [record.to_json() for record in typed.records] == body.document()["records"]


@pytest.mark.parametrize("at_once", [True, False])
def test_a_record_is_typed_alike_whichever_way_a_test_record_is_made(
    monkeypatch: pytest.MonkeyPatch, at_once: bool
) -> None:
    """A body's record as a ``TestRecord`` (made only where a reader asks) is the frozen
    dataclass's own, whether its fields are set at once or (a ``TestRecord`` of another
    shape) ``__init__`` is called."""
    from kit.report import body
    from kit.results import Status, TestRecord

    monkeypatch.setattr(body, "_FIELDS_SET_AT_ONCE", at_once)
    record = body.BodyRecord("unit/opinfo/add/float32/0", "unit", Status.PASS, 0.5, "", {"k": 1})
    assert record.to_record() == TestRecord("unit/opinfo/add/float32/0", Status.PASS, 0.5, "",
                                            {"k": 1})


def test_records_asked_at_once_refuse_what_one_by_one_refuses() -> None:
    """``records_sound`` (all records in C, a tier's run at a time) refuses each unsound record
    ``_record_problem`` names, sorted among sound ones; records out of order are left to the
    one-by-one reading."""
    from kit.report.body import BodyRecord
    from kit.results import Status
    from kit.verification.body_records import records_sound

    def record(test_id: str, tier: str = "unit", details: dict[str, Any] | None = None
               ) -> BodyRecord:
        return BodyRecord(test_id, tier, Status.PASS, 0.5, "", details or {})

    sound = [record("models/hf/x", "models"), record("unit/a"), record("unit/b", details={
        "na_reason": "not-in-release"})]
    assert records_sound(sound, Status, {"models", "unit"})
    for unsound in (record("unit//x"), record("unit/"), record("unit"), record("units/x"),
                    record("models/y"), record("unit/x", "nowhere"),
                    record("unit/x", details={"na_reason": 3})):
        records = sorted([*sound, unsound], key=lambda r: r.id)
        assert not records_sound(records, Status, {"models", "unit"}), unsound
    assert not records_sound(sound, {Status.FAIL_NUMERIC}, {"models", "unit"})
    assert not records_sound(sound[::-1], Status, {"models", "unit"})


def test_records_out_of_order_are_asked_one_by_one(report: dict[str, Any]) -> None:
    """A body whose records are not in a report's order (the kit writes them sorted) is
    checked record by record: passed when each is sound, its first unsound record named."""
    reordered = copy.deepcopy(report)
    reordered["records"].reverse()
    assert checked(reordered).passed, checked(reordered).problem
    bad = with_record(reordered, 2, details={"na_reason": 3})
    assert checked(bad).problem == (f"step 9: record {bad['records'][2]['id']!r}: "
                                    "details.na_reason is not a string")


def test_a_reader_refuses_a_body_with_a_status_not_the_kits(report: dict[str, Any],
                                                             tmp_path: Path) -> None:
    """``ckit show`` and the other readers (``kit.report.read``) refuse, in one line, a body
    whose records read but for a status the kit does not have; it is written as it was."""
    from kit.errors import InputError
    from kit.report.body import write_body_files
    from kit.report.read import read_report

    forged = with_record(report, 1, status="PASSED")
    write_body_files(forged, tmp_path / "run")
    with pytest.raises(InputError) as caught:
        read_report(tmp_path / "run")
    assert str(caught.value).endswith(
        f"record {forged['records'][1]['id']!r}: unknown status 'PASSED'")
