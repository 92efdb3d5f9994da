"""summary.md: the job summary a release manager reads."""

from __future__ import annotations

import re

from report_helpers import OPTIONAL, REQUIRED, baseline_records, run_info, skip_entry

from kit.formats.markdown import MAX_FAILING_ROWS, MarkdownFormat
from kit.results import Status, TestRecord


def render(report: dict) -> str:
    return MarkdownFormat().render(report).decode("utf-8")


def table_rows(markdown: str, title_start: str) -> list[str]:
    lines = markdown.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(title_start))
    rows = []
    for line in lines[start + 4:]:  # title, blank, header, separator
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def test_title_names_vendor_grade_and_versions(make_report):
    report = make_report(baseline_records())
    text = render(report)
    first = text.splitlines()[0]
    # The vendor by id: a profile's display name is the vendor's own word (issue 36).
    assert first.startswith("# ") and first.endswith(" `cpu`: conformant")
    assert "PyTorch CPU" not in first
    assert report["kit"]["digest"] in text
    standard = report["standard"]
    assert f"standard {standard['version']}" in text
    assert f"PyTorch {standard['torch_release']}" in text
    assert "| **all** | 5 | 0 |" in text


def test_failing_table_and_grade_reasons(make_report):
    records = [
        *baseline_records()[:2],
        TestRecord(REQUIRED, Status.FAIL_NUMERIC, 0.2, "2/8 elements differ"),
        TestRecord(OPTIONAL, Status.CRASH, 0.2, "worker died: SIGSEGV"),
    ]
    text = render(make_report(records))
    rows = table_rows(text, "## Failing tests (2) by op and dtype (2 groups)")
    assert rows == [
        f"| `unit/opinfo/sin` | float32 | 1 | FAIL_NUMERIC 1 | `{REQUIRED}`: 2/8 elements differ |",
        f"| `unit/opinfo/sin` | float64 | 1 | CRASH 1 | `{OPTIONAL}`: worker died: SIGSEGV |",
    ]
    assert "## Why not a better grade" in text
    assert f"{REQUIRED} (FAIL\\_NUMERIC)" in text


def test_failures_are_grouped_by_op_and_dtype_with_the_worst_error(make_report):
    # 140 failures of two ops in two dtypes: four rows, not 140.
    records = [
        TestRecord(
            f"unit/opinfo/{op}/{dtype}/{i}", Status.FAIL_NUMERIC, 0.1, f"sample {i} off",
            {"max_rel_err": i / 100, "max_abs_err": 1.0},
        )
        for op in ("cos", "sin") for dtype in ("float16", "float64") for i in range(35)
    ]
    records.append(TestRecord("unit/opinfo/sin/float64/35", Status.CRASH, 0.1, "SIGSEGV"))
    text = render(make_report(records))
    rows = table_rows(text, "## Failing tests (141) by op and dtype (4 groups)")
    assert rows[0] == (
        "| `unit/opinfo/sin` | float64 | 36 | CRASH 1, FAIL_NUMERIC 35 | "
        "`unit/opinfo/sin/float64/34`: max_rel_err 0.34 max_abs_err 1.0 · sample 34 off |"
    )
    assert [row.split(" | ")[:3] for row in rows[1:]] == [
        ["| `unit/opinfo/cos`", "float16", "35"],
        ["| `unit/opinfo/cos`", "float64", "35"],
        ["| `unit/opinfo/sin`", "float16", "35"],
    ]


def test_the_worst_error_stays_exact_as_earlier_kits_signed_it(make_report):
    # summary.md of a report.json-format report is a signed file that verify renders again and
    # compares byte for byte: rounding it (as the human views do) would reject every report an
    # earlier kit signed with a failure in it.
    figures = {"max_rel_err": 1.0000000474974513e+297, "max_abs_err": 10485.7702326819}
    report = make_report([TestRecord(REQUIRED, Status.FAIL_NUMERIC, 0.2, "off", figures)])
    rows = table_rows(render(report), "## Failing tests (1)")
    assert rows == [f"| `unit/opinfo/sin` | float32 | 1 | FAIL_NUMERIC 1 | `{REQUIRED}`: "
                    "max_rel_err 1.0000000474974513e+297 max_abs_err 10485.7702326819 · off |"]


def test_failing_table_is_capped(make_report):
    records = [TestRecord(f"unit/opinfo/op{i:03}/float64/0", Status.ERROR, 0.1, "boom")
               for i in range(MAX_FAILING_ROWS + 25)]
    text = render(make_report(records))
    assert len(table_rows(text, "## Failing tests (225) by op")) == MAX_FAILING_ROWS
    assert "... and 25 more groups (see results.csv)" in text


def test_markdown_injection_in_a_message_stays_in_its_cell(make_report):
    hostile = "a | b\n| forged | row |\n[click](javascript:alert(1)) <img src=x onerror=alert(1)>"
    text = render(make_report([TestRecord(OPTIONAL, Status.ERROR, 0.1, hostile)]))
    (row,) = table_rows(text, "## Failing tests (1)")
    cells = re.split(r"(?<!\\)\|", row)[1:-1]  # split on the pipes Markdown sees
    assert len(cells) == 5
    assert "\\[click\\](javascript" in cells[4]  # escaped: no link
    assert re.search(r"(?<!\\)<img", text) is None  # escaped: no HTML


def test_skipped_tests_grouped_by_entry_and_stale_entries(make_report, manifest):
    skips = manifest([skip_entry("unit/opinfo/cos/float64/*", expires="2027-01-31"),
                      skip_entry("unit/opinfo/gone/*/*")])
    records = [*baseline_records(),
               TestRecord("unit/opinfo/cos/float64/0", Status.SKIPPED),
               TestRecord("unit/opinfo/cos/float64/1", Status.SKIPPED)]
    text = render(make_report(records, skips=skips))
    (row,) = table_rows(text, "## Skipped tests (2)")
    assert row == (
        "| `unit/opinfo/cos/float64/*` | 2 | `unit/opinfo/cos/float64/0` | precision | "
        "<https://tracker.example.org/issues/42> | 2027-01-31 |"
    )
    (stale,) = table_rows(text, "## Stale skip-manifest entries")
    assert stale.startswith("| `unit/opinfo/gone/*/*` | precision |")


def test_violations_are_listed(make_report):
    text = render(make_report(baseline_records(), run=run_info(select=["unit/*"])))
    (row,) = table_rows(text, "## Skip-policy violations")
    assert row.startswith("| incomplete-run | the run was narrowed")
