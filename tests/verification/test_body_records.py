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
def test_records_are_typed_alike_whichever_way_a_test_record_is_made(
    monkeypatch: pytest.MonkeyPatch, at_once: bool
) -> None:
    """The one-pass typing gives the frozen dataclass's own records, and refuses an unsound
    record, whether it sets fields at once or (a ``TestRecord`` of another shape) calls
    ``__init__``."""
    from kit.report import body
    from kit.results import Status, TestRecord

    monkeypatch.setattr(body, "_FIELDS_SET_AT_ONCE", at_once)
    statuses = {status.value: status for status in Status}
    prefixes = {"unit": "unit/"}
    sound = body.BodyRecord("unit/opinfo/add/float32/0", "unit", "PASS", 0.5, "", {"k": 1})
    typed = body.records_typed_if_sound([sound], statuses, prefixes)
    assert typed == (TestRecord("unit/opinfo/add/float32/0", Status.PASS, 0.5, "", {"k": 1}),)
    for unsound in (body.BodyRecord("unit//x", "unit", "PASS", 0.5, "", {}),
                    body.BodyRecord("unit/x", "unit", "MAYBE", 0.5, "", {}),
                    body.BodyRecord("models/x", "unit", "PASS", 0.5, "", {}),
                    body.BodyRecord("unit/x", "unit", "PASS", 0.5, "", {"na_reason": 3})):
        assert body.records_typed_if_sound([sound, unsound], statuses, prefixes) is None
