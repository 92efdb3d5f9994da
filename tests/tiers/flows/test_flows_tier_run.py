"""The flows tier through the real CLI on the real backends, narrowed to a few ops.

One ``ckit run --tier flows`` claims two of the three program flows (``--flows``), so the
third is NOT_APPLICABLE; ``cumsum`` is an op XNNPACK does not take (NOT_DELEGATED there).
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from flows_tier_helpers import ckit_env, report_of, run_ckit

from kit.cli import main
from kit.report.model import Report

CLAIMED = "executorch_xnnpack,onnxruntime_cpu"
CUMSUM_XNNPACK = "flows/executorch_xnnpack/opinfo/cumsum/float32/0"
ADD_INT8 = "flows/executorch_xnnpack_int8/opinfo/add/float32/0"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("flows-run")
    out = base / "out"
    result = run_ckit(
        ["run", "--vendor", "cpu", "--tier", "flows", "--flows", CLAIMED,
         "--select", "flows/*/opinfo/add/float32/0", "--select", "flows/*/opinfo/cumsum/float32/0",
         "--no-sign", "--out", str(out)],
        ckit_env(base),
    )
    assert (out / "report.json").exists(), result.stderr[-3000:]
    return out


def _stages(report: dict[str, Any], flow: str) -> Counter[str]:
    return Counter(r["details"]["stage"] for r in report["records"]
                   if r["details"].get("flow") == flow)


def test_per_flow_counts_in_report_match_the_records(run_dir: Path) -> None:
    report = report_of(run_dir)
    flows = report["summary"]["flows"]
    assert {flow: dict(totals["stages"]) for flow, totals in flows.items()} == {
        flow: dict(_stages(report, flow)) for flow in CLAIMED.split(",")
    }


def test_read_model_exposes_the_flow_totals(run_dir: Path) -> None:
    report = Report.from_json(report_of(run_dir))
    totals = report.flows["executorch_xnnpack"]
    assert (totals.total, totals.top_undelegated[0][0]) == (2, "aten.cumsum.default")


def test_summary_md_has_a_row_per_claimed_flow(run_dir: Path) -> None:
    text = (run_dir / "summary.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith(("| executorch", "| onnx"))]
    # Markdown cells escape underscores.
    names = [row.split(" | ")[0].lstrip("| ").replace("\\_", "_") for row in rows]
    assert names == CLAIMED.split(",")


def test_op_xnnpack_does_not_take_is_not_delegated(run_dir: Path) -> None:
    record = next(r for r in report_of(run_dir)["records"] if r["id"] == CUMSUM_XNNPACK)
    assert (record["status"], record["details"]["undelegated_op_names"]) == (
        "NOT_DELEGATED", {"aten.cumsum.default": 1})


def test_unclaimed_flow_is_not_applicable(run_dir: Path) -> None:
    record = next(r for r in report_of(run_dir)["records"] if r["id"] == ADD_INT8)
    assert (record["status"], record["details"]["na_reason"]) == (
        "NOT_APPLICABLE", "unclaimed-flow")


def test_passing_records_carry_every_stage_fact(run_dir: Path) -> None:
    record = next(r for r in report_of(run_dir)["records"]
                  if r["id"] == "flows/onnxruntime_cpu/opinfo/add/float32/0")
    facts = ("flow", "stage", "delegated_ops", "undelegated_ops", "lowering_s", "program_bytes",
             "cached", "max_abs_err", "max_rel_err", "mse", "sqnr_db")
    assert (record["status"], [f for f in facts if f not in record["details"]]) == ("PASS", [])


def test_results_csv_has_flow_and_stage_columns(run_dir: Path) -> None:
    rows = list(csv.DictReader(io.StringIO((run_dir / "results.csv").read_text())))
    row = next(r for r in rows if r["id"] == CUMSUM_XNNPACK)
    assert (row["flow"], row["stage"]) == ("executorch_xnnpack", "NOT_DELEGATED")


def test_junit_carries_the_stage_as_a_property(run_dir: Path) -> None:
    text = (run_dir / "junit.xml").read_text()
    assert '<property name="stage" value="NOT_DELEGATED" />' in text


def test_the_report_records_the_flows_the_run_claimed(run_dir: Path) -> None:
    assert report_of(run_dir)["vendor"]["flows"] == CLAIMED.split(",")


def test_unknown_flow_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--vendor", "cpu", "--flows", "tpu_magic", "--list"])
    err = capsys.readouterr().err
    assert (code, err.splitlines()[0].startswith("ckit: error: --flows: unknown flow tpu_magic;")) \
        == (3, True)
