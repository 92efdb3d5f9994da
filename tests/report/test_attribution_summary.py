"""summary.attribution: the per-op totals of the records' details.dispatch, in report.json (only
where a record carries one: a v1 report keeps its summary), summary.md and the typed report."""

from __future__ import annotations

import dataclasses
import json
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema
import pytest
from report_helpers import baseline_records, run_info

from kit.attribution.dispatch import dispatch_places
from kit.attribution.op_names import release_core_ops
from kit.formats.markdown import MarkdownFormat
from kit.portal.model import result_detail
from kit.report import validate_report
from kit.report.attribution_summary import (
    AttributionTotals,
    attribution_summary,
    dispatch_op_names,
    recorded_dispatches,
    well_formed_dispatch,
)
from kit.report.model import Report
from kit.report.schema import schema_path
from kit.results import DISPATCH_KEY, Status, TestRecord
from kit.standard import load_standard


def _attributed(records: list[TestRecord]) -> list[TestRecord]:
    """The baseline, its first unit records given where their ops ran: add natively twice, flip
    through the fallback once (a PASS), matmul decomposed into a native mm."""
    units = [r for r in records if r.tier == "unit"][:3]
    dispatches = [
        {"native": ["aten::add.Tensor"], "cpu": ["aten::ones"]},
        {"native": ["aten::add.Tensor"], "fallback": ["aten::flip"]},
        {"native": ["aten::mm"], "decomposed": ["aten::matmul"]},
    ]
    given = {r.id: {**r.details, DISPATCH_KEY: d} for r, d in zip(units, dispatches, strict=True)}
    return [dataclasses.replace(r, details=given.get(r.id, r.details)) for r in records]


def test_the_summary_counts_each_op_per_place_and_the_native_rate(make_report):
    report = make_report(_attributed(baseline_records()))
    validate_report(report)
    totals = report["summary"]["attribution"]
    assert totals["tests"] == 3 and totals["tests_with_fallback"] == 1
    assert totals["ops"] == {
        "aten::add.Tensor": {"native": 2, "fallback": 0, "decomposed": 0},
        "aten::flip": {"native": 0, "fallback": 1, "decomposed": 0},
        "aten::matmul": {"native": 0, "fallback": 0, "decomposed": 1},
        "aten::mm": {"native": 1, "fallback": 0, "decomposed": 0},
    }
    assert totals["native_rate"] == 0.75  # 3 native (test, op) pairs of 4 native or fallback
    typed = Report.from_json(report).attribution
    assert typed is not None and typed.fallback_ops() == (("aten::flip", 1),)


def test_summary_md_names_the_ops_that_went_through_the_fallback(make_report):
    text = MarkdownFormat().render(make_report(_attributed(baseline_records()))).decode()
    section = text.split("## What ran on the device", 1)[1].split("\n## ", 1)[0]
    assert "75.00% of the device ops of 3 test(s) ran natively" in section
    assert "| `aten::flip` | 1 | 0 |" in section
    assert "aten::add.Tensor" not in section


def test_summary_md_says_attribution_is_the_vendors_word(make_report):
    finished = {"started_at": "2026-11-29T10:00:00+00:00",
                "finished_at": "2026-11-29T10:05:00+00:00"}
    report = make_report(_attributed(baseline_records()), run=run_info(**finished))
    section = MarkdownFormat().render(report).decode().split("## What ran on the device", 1)[1]
    assert section.lstrip().startswith("As reported by the vendor's process, not measured by "
                                       "the kit: 75.00% of the device ops of 3 test(s)")
    # A run finished before the kit said so: its signed summary.md regenerates as it was.
    older = MarkdownFormat().render(make_report(_attributed(baseline_records()))).decode()
    assert "As reported by the vendor's process" not in older


def test_the_portal_says_what_ran_on_the_device(make_report):
    detail = result_detail(Report.from_json(make_report(_attributed(baseline_records()))))
    core = release_core_ops("2.13.0")
    assert core is not None
    assert detail.attribution == ("75.00% of the device ops of 3 test(s) ran natively; 1 test(s) "
                                  "used the backend's fallback: aten::flip (1); core ATen ops "
                                  f"(torch 2.13.0): 3/{len(core)} exercised, 2 native, 0 "
                                  "decomposed, 1 through the fallback")


def test_without_dispatch_details_a_v1_report_keeps_its_summary(make_report):
    v1 = dataclasses.replace(load_standard("v1"), test_lists={})
    report = make_report(baseline_records(), standard_override=v1)
    assert "attribution" not in report["summary"]
    validate_report(report)
    assert Report.from_json(report).attribution is None
    # v1's schema has no room for the totals; v2's does.
    attributed = make_report(_attributed(baseline_records()))
    v1_schema = json.loads(schema_path("v1").read_text(encoding="utf-8"))
    errors = list(jsonschema.Draft202012Validator(v1_schema).iter_errors(attributed))
    assert any("attribution" in error.message for error in errors)


class _Name(str):
    """An op name that is a str of another type (JSON never reads one; a record built in
    memory may hold one)."""


class _Places(Mapping[str, Any]):
    """A dispatch that is a mapping but no dict."""

    def __init__(self, items: dict[str, Any]) -> None:
        self._items = items

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


#: Values a record's details.dispatch may hold, well formed or not: each is read as
#: ``dispatch_places`` reads it, whether it is asked alone or with the others.
_DISPATCHES: list[Any] = [
    {"native": ["aten::add.Tensor"], "cpu": ["aten::ones"]},
    {"native": ["aten::add.Tensor"], "fallback": ["aten::flip"]},
    {"native": [], "fallback": []},
    {},
    {"native": ("aten::add.Tensor",)},
    {"native": "aten::add.Tensor"},
    {"native": ["aten::add.Tensor", 3]},
    {"native": [_Name("aten::mm")]},
    {"elsewhere": ["aten::mm"]},
    {1: ["aten::mm"]},
    _Places({"fallback": ["aten::flip"]}),
    OrderedDict(decomposed=["aten::matmul"]),
    ["aten::mm"],
    "native",
    None,
]


def test_each_dispatch_reads_as_dispatch_places_reads_it() -> None:
    for data in _DISPATCHES:
        assert well_formed_dispatch(data) == dispatch_places(data), data


@pytest.mark.parametrize("malformed", range(len(_DISPATCHES)))
def test_the_totals_count_the_well_formed_dispatches_alone(malformed: int) -> None:
    """One value among well-formed ones read as JSON reads them: counted alike whether the
    records are asked all at once or one by one."""
    good = _DISPATCHES[:2] * 3
    values = [*good[:3], _DISPATCHES[malformed], *good[3:]]
    records = [TestRecord(f"unit/opinfo/add/float32/{n}", Status.PASS,
                          details={} if value is None else {DISPATCH_KEY: value})
               for n, value in enumerate(values)]
    assert list(recorded_dispatches(records)) == [
        places for places in map(dispatch_places, values) if places is not None]
    assert attribution_summary(records) == _one_by_one(records)
    # Verify's op-name check: every name of every place, of the well-formed ones alone.
    assert dispatch_op_names(records) == {
        name for places in map(dispatch_places, values) if places is not None
        for names in places.values() for name in names}


def _one_by_one(records: list[TestRecord]) -> AttributionTotals | None:
    """The totals as each record alone gives them (``dispatch_places`` of each)."""
    per_op: dict[str, dict[str, int]] = {}
    tests = with_fallback = 0
    for record in records:
        places = dispatch_places(record.details.get(DISPATCH_KEY))
        if places is None:
            continue
        tests += 1
        with_fallback += bool(places.get("fallback"))
        for where in ("native", "fallback", "decomposed"):
            for op in places.get(where, ()):
                counts = per_op.setdefault(op, dict.fromkeys(("native", "fallback",
                                                              "decomposed"), 0))
                counts[where] += 1
    if not tests:
        return None
    native = sum(c["native"] for c in per_op.values())
    fallback = sum(c["fallback"] for c in per_op.values())
    return AttributionTotals(tests, with_fallback,
                             round(native / (native + fallback), 6) if native + fallback else None,
                             {op: per_op[op] for op in sorted(per_op)})
