"""summary.attribution: the per-op totals of the records' details.dispatch, in report.json (only
where a record carries one: a v1 report keeps its summary), summary.md and the typed report."""

from __future__ import annotations

import dataclasses
import json

import jsonschema
from report_helpers import baseline_records, run_info

from kit.formats.markdown import MarkdownFormat
from kit.portal.model import result_detail
from kit.report import validate_report
from kit.report.model import Report
from kit.report.schema import schema_path
from kit.results import DISPATCH_KEY, TestRecord
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
    assert detail.attribution == ("75.00% of the device ops of 3 test(s) ran natively; 1 test(s) "
                                  "used the backend's fallback: aten::flip (1)")


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
