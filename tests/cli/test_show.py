"""``ckit show``: a report read in the terminal, through the real CLI."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from cli_helpers import (
    SELECT,
    numeric_failure,
    records_with,
    report_of,
    selected_ids,
    write_report,
)

from kit.attribution.op_names import release_core_ops
from kit.cli import main
from kit.errors import ExitCode
from kit.patterns import matches_any
from kit.results import Status, TestRecord
from kit.standard import load_standard

SMALL = "unit/opinfo/add/float32/0"
LARGE = "unit/opinfo/add/float32/1"
BROKEN = "unit/opinfo/sin/float64/0"
OUTCOMES = {
    SMALL: numeric_failure(SMALL, 0.001, 0.02),
    LARGE: numeric_failure(LARGE, 0.5, "inf"),
    BROKEN: TestRecord(BROKEN, Status.ERROR, 0.1, "RuntimeError: kernel launch failed"),
}


@pytest.fixture
def failing_run(tmp_path: Path) -> Path:
    write_report(tmp_path / "run", report_of(records_with(OUTCOMES, selected_ids())))
    return tmp_path / "run"


def _show(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["show", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_show_prints_grade_tiers_failure_groups_and_top_errors(
    failing_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _show(capsys, str(failing_run))
    lines = out.splitlines()
    assert code == ExitCode.OK
    assert ("grade: non-conformant (partial: the tests it ran are non-conformant too; only a "
            "complete run is graded conformant)") in lines
    assert any(line.startswith("  why: ") and "required test" in line for line in lines)
    passed = len(selected_ids()) - len(OUTCOMES)
    unit_row = next(line.split() for line in lines if line.startswith("unit "))
    assert unit_row[:4] == ["unit", str(passed), "2", "1"]  # PASS, FAIL_NUMERIC, ERROR
    assert "failures by op × dtype: 3 test(s) in 2 group(s)" in lines
    groups = [line.split() for line in lines if line.startswith("  2 ") or line.startswith("  1 ")]
    assert groups == [
        ["2", "unit/opinfo/add", "float32", "FAIL_NUMERIC", "2"],
        ["1", "unit/opinfo/sin", "float64", "ERROR", "1"],
    ]
    top = lines[lines.index("top errors (largest max_rel_err, then max_abs_err):") + 1:]
    assert [line.split()[0] for line in top] == [LARGE, SMALL]  # an infinite error ranks first
    assert "max_abs_err 0.5  max_rel_err inf  max_ulps 12" in top[0]


def test_show_json_holds_every_group_and_the_reports_digest(
    failing_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _show(capsys, str(failing_run / "report.json"), "--json")
    view = json.loads(out)
    assert code == ExitCode.OK
    assert view["grade"]["name"] == "non-conformant"
    assert view["failures"] == {
        "tests": 3,
        "groups": [
            {"op": "unit/opinfo/add", "dtype": "float32", "count": 2,
             "statuses": {"FAIL_NUMERIC": 2}},
            {"op": "unit/opinfo/sin", "dtype": "float64", "count": 1, "statuses": {"ERROR": 1}},
        ],
    }
    assert [e["id"] for e in view["top_errors"]] == [LARGE, SMALL]
    digest = hashlib.sha256((failing_run / "report.json").read_bytes()).hexdigest()
    assert view["report_sha256"] == digest


def test_show_counts_a_missing_test_as_a_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = selected_ids()
    write_report(tmp_path / "run", report_of(records_with({}, ids[1:])))
    _, out, _ = _show(capsys, str(tmp_path / "run"), "--json")
    groups = json.loads(out)["failures"]["groups"]
    assert groups == [{"op": "unit/opinfo/add", "dtype": "float32", "count": 1,
                       "statuses": {"MISSING": 1}}]


def test_an_escape_sequence_in_a_report_field_does_not_reach_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    forged = "\x1b[2K\rgrade: conformant"
    report = report_of(records_with(OUTCOMES, selected_ids()), select=(*SELECT, forged))
    write_report(tmp_path / "run", report)
    code, out, _ = _show(capsys, str(tmp_path / "run"))
    assert code == ExitCode.OK
    assert "\x1b" not in out and "\r" not in out
    assert "\\x1b[2K\\rgrade: conformant" in out




def test_a_report_with_a_duplicate_key_is_refused_in_one_line(
    failing_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = failing_run / "report.json"
    path.write_text('{"grade": {}, "grade": {}}', encoding="utf-8")
    code, out, err = _show(capsys, str(failing_run))
    assert code == ExitCode.INPUT_ERROR and out == ""
    assert err == f"ckit: error: {path}: duplicate key 'grade'\n"


def test_a_fifo_named_report_json_is_refused_not_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "run").mkdir()
    os.mkfifo(tmp_path / "run" / "report.json")
    code, _, err = _show(capsys, str(tmp_path / "run"))
    assert code == ExitCode.INPUT_ERROR
    assert err == f"ckit: error: report {tmp_path / 'run' / 'report.json'} is not a regular " \
        "file (a FIFO)\n"


def test_a_document_that_is_not_a_report_is_refused_in_one_line(
    failing_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = failing_run / "report.json"
    path.write_text('{"standard": {"version": "v1"}}', encoding="utf-8")
    code, _, err = _show(capsys, str(path))
    assert code == ExitCode.INPUT_ERROR
    assert err.startswith(f"ckit: error: {path}: not a report this kit can read: report violates")
    assert err.count("\n") == 1


def test_a_fifo_planted_as_run_json_beside_the_report_is_refused_not_read(
    failing_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(failing_run / "run.json")
    code, out, err = _show(capsys, str(failing_run))
    assert code == ExitCode.INPUT_ERROR and out == ""
    assert err == f"ckit: error: run file {failing_run / 'run.json'} is not a regular file " \
        "(a FIFO)\n"


def test_show_says_which_ops_went_through_the_fallback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fell_back = {"dispatch": {"fallback": ["aten::add.Tensor"]}}
    native = {"dispatch": {"native": ["aten::add.Tensor"]}}
    outcomes = {
        SMALL: TestRecord(SMALL, Status.PASS, 0.1, "", fell_back),
        LARGE: TestRecord(LARGE, Status.PASS, 0.1, "", native),
    }
    write_report(tmp_path / "run", report_of(records_with(outcomes, selected_ids())))
    code, out, _ = _show(capsys, str(tmp_path / "run"))
    assert code == ExitCode.OK
    lines = out.splitlines()
    assert ("what ran on the device (reported by the vendor's process): 50.00% of the device "
            "ops of 2 test(s) ran natively; 1 test(s) used the backend's fallback") in lines
    assert "  fallback: aten::add.Tensor in 1 test(s)" in lines
    code, out, _ = _show(capsys, str(tmp_path / "run"), "--json")
    assert json.loads(out)["attribution"]["fallback_ops"] == [{"op": "aten::add.Tensor",
                                                               "tests": 1}]
    assert json.loads(out)["attribution"]["reported_by"] == "vendor process"
    code, out, _ = _show(capsys, str(tmp_path / "run"), "--format", "comment")
    assert ("Attribution, as reported by the vendor's process: 50.00% of the device ops of 2 "
            "test(s) ran natively; 1 test(s) used the backend's fallback.") in out.splitlines()


def test_show_counts_the_core_aten_ops_the_device_calls_reached(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # add.Tensor natively in one test, through the fallback in another: the fallback counts.
    outcomes = {
        SMALL: TestRecord(SMALL, Status.PASS, 0.1, "", {"dispatch": {
            "fallback": ["aten::add.Tensor"], "decomposed": ["aten::addmm"]}}),
        LARGE: TestRecord(LARGE, Status.PASS, 0.1, "", {"dispatch": {
            "native": ["aten::add.Tensor", "aten::mm", "aten::matmul"]}}),
    }
    write_report(tmp_path / "run", report_of(records_with(outcomes, selected_ids())))
    core = release_core_ops("2.13.0")
    assert core is not None and {"aten::add.Tensor", "aten::mm", "aten::addmm"} <= core
    assert "aten::matmul" not in core  # CompositeImplicitAutograd: no core op
    code, out, _ = _show(capsys, str(tmp_path / "run"), "--limit", "2")
    lines = out.splitlines()
    assert code == ExitCode.OK
    assert (f"core ATen ops (torch 2.13.0): 3/{len(core)} exercised, 1 native, 1 decomposed, 1 "
            "through the fallback") in lines
    unexercised = sorted(core - {"aten::add.Tensor", "aten::mm", "aten::addmm"})
    assert (f"  not exercised: {unexercised[0]}, {unexercised[1]} and {len(core) - 5} more "
            "(--json)") in lines
    code, out, _ = _show(capsys, str(tmp_path / "run"), "--json")
    shown = json.loads(out)["core_aten"]
    assert (shown["core_ops"], shown["exercised"], shown["native"]) == (len(core), 3, 1)
    assert shown["ops"]["aten::add.Tensor"] == "fallback" and shown["ops"]["aten::mm"] == "native"
    assert shown["ops"][unexercised[0]] is None


def test_comment_format_is_short_markdown_listing_regressions_first(
    failing_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = tmp_path / "baseline"
    write_report(baseline, report_of(records_with({}, selected_ids()), canary=True))
    write_report(tmp_path / "canary", report_of(records_with(OUTCOMES, selected_ids()),
                                                canary=True))
    code, out, _ = _show(capsys, str(tmp_path / "canary"), "--format", "comment",
                         "--against", str(baseline))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("**Baseline not verified**: ")  # unsigned
    assert lines[2].startswith("### ckit canary run (not a certificate): `cpu` on torch `2.13")
    assert "| unit |" in out and "Grade **`" in out
    regressed = [line for line in lines if line.startswith("- `unit/opinfo/")]
    assert regressed == [  # one line per op × dtype, its worst error and an example
        f"- `unit/opinfo/add` `float32`: 2 test(s) (FAIL_NUMERIC 2); worst max_rel_err inf; "
        f"e.g. `{LARGE}`",
        f"- `unit/opinfo/sin` `float64`: 1 test(s) (ERROR 1); e.g. `{BROKEN}`",
    ]
    assert "3 regressed" in out and lines.index("**Regressed (3):**") > lines.index(
        "| tier | tests | passed | failed | skipped | not applicable |")


def test_against_without_the_comment_format_is_a_usage_line(
    failing_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _show(capsys, str(failing_run), "--against", str(failing_run))
    assert code == ExitCode.INPUT_ERROR
    assert "--against goes with --format comment" in err and err.count("\n") == 1


def test_show_says_where_each_failing_training_step_went_off_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    select = ("models/hf/*/train",)
    ids = [t for t in load_standard().test_ids("models") if matches_any(t, select)]
    off = {"quantity": "gradient", "first_off": "model.layers.1.mlp.up_proj.weight",
           "last_off": "model.layers.1.mlp.up_proj.weight", "off": 1, "parameters": 27}
    failing = TestRecord("models/hf/llama/train", Status.FAIL_NUMERIC, 0.5, "TrainingMismatch",
                         {"max_abs_err": 0.1, "max_rel_err": 0.2, "training": off})
    unclaimed = TestRecord("models/hf/bert/train", Status.NOT_APPLICABLE, 0.0, "no such dtype")
    records = records_with({failing.id: failing, unclaimed.id: unclaimed}, ids)
    write_report(tmp_path / "run", report_of(records, select, tiers=["models"]))
    code, out, _ = _show(capsys, str(tmp_path / "run"))
    lines = out.splitlines()
    assert code == ExitCode.OK
    assert (f"training steps (model tier): {len(ids) - 2} of {len(ids)} passed "
            "(1 not run: not applicable or skipped)") in lines
    assert not any(line.startswith("  models/hf/bert/train") for line in lines)  # not failing
    assert ("  models/hf/llama/train  FAIL_NUMERIC  gradient of model.layers.1.mlp.up_proj.weight "
            "(first of 1 parameter(s) off)") in lines


HUGE = "unit/opinfo/add/float32/2"
HUGE_TOO = "unit/opinfo/add/float32/10"
HUGE_FIGURES = {"max_abs_err": 1.0000000474974513e+297, "max_rel_err": 1.0000000474974513e+297,
                "ratio_to_bound": 10485.7702326819}
REPRO_COMMAND = ("python -m pytest kit/tiers/unit --ckit-vendor=cpu "
                 f"--ckit-select={HUGE_TOO}")


def _huge_failure(test_id: str) -> TestRecord:
    repro = {"inputs": {"args": [], "kwargs": {}}, "seed": 7,
             "pytest": REPRO_COMMAND.replace(HUGE_TOO, test_id)}
    return TestRecord(test_id, Status.FAIL_NUMERIC, 0.5, "elements outside the bound",
                      {**HUGE_FIGURES, "repro": repro})


@pytest.fixture
def huge_error_run(tmp_path: Path) -> Path:
    """Two failures of equal, huge errors, at ids a plain string sort puts the wrong way round."""
    outcomes = {test_id: _huge_failure(test_id) for test_id in (HUGE_TOO, HUGE)}
    write_report(tmp_path / "run", report_of(records_with(outcomes, selected_ids())))
    return tmp_path / "run"


def test_show_rounds_errors_and_ratios_to_three_significant_digits(
    huge_error_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _show(capsys, str(huge_error_run))
    assert code == ExitCode.OK
    assert (f"  {HUGE}  FAIL_NUMERIC  max_abs_err 1e+297  max_rel_err 1e+297  "
            "ratio_to_bound 1.05e+04") in out.splitlines()
    assert "1.0000000474974513e+297" not in out and "10485.77" not in out


def test_show_json_keeps_the_figures_exact(
    huge_error_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _show(capsys, str(huge_error_run), "--json")
    assert code == ExitCode.OK
    figures = [error["figures"] for error in json.loads(out)["top_errors"]]
    assert figures == [HUGE_FIGURES, HUGE_FIGURES]


def test_show_lists_ids_in_natural_order(
    huge_error_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = _show(capsys, str(huge_error_run))
    lines = out.splitlines()
    top = lines[lines.index("top errors (largest max_rel_err, then max_abs_err):") + 1:]
    assert [line.split()[0] for line in top[:2]] == [HUGE, HUGE_TOO]  # 2 before 10


def test_show_prints_each_failures_repro_command_and_the_interpreter_recorded(
    huge_error_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = _show(capsys, str(huge_error_run))
    lines = out.splitlines()
    environment = json.loads((huge_error_run / "report.json").read_text())["environment"]
    python = f"{environment['python']['implementation']} {environment['python']['version']}"
    head = next(line for line in lines if line.startswith("reproduce a failure"))
    assert f"`python` is the run's Python ({python})" in head and "records no path" in head
    repro = lines[lines.index(head) + 1:]
    assert repro == [f"  {HUGE}", f"    {REPRO_COMMAND.replace(HUGE_TOO, HUGE)}",
                     f"  {HUGE_TOO}", f"    {REPRO_COMMAND}"]


def test_comment_rounds_the_regressions_worst_ratio_and_names_the_first_id_in_natural_order(
    huge_error_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = tmp_path / "baseline"
    write_report(baseline, report_of(records_with({}, selected_ids())))
    _, out, _ = _show(capsys, str(huge_error_run), "--format", "comment",
                      "--against", str(baseline))
    regressed = [line for line in out.splitlines() if line.startswith("- `unit/opinfo/")]
    assert regressed == [f"- `unit/opinfo/add` `float32`: 2 test(s) (FAIL_NUMERIC 2); worst "
                         f"ratio to bound 1.05e+04; e.g. `{HUGE}`"]  # 2 before 10
    assert "10485.77" not in out


def _runs_under(parent: Path, run: Path, *names: str) -> list[Path]:
    """Copies of ``run`` as runs under ``parent``, as ``make certify`` leaves results/cpu."""
    copies = [parent / name for name in names]
    for copy in copies:
        shutil.copytree(run, copy)
    return copies


def test_a_directory_of_stamped_runs_shows_the_newest_and_says_so_first(
    failing_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parent = tmp_path / "results" / "cpu"
    _, newest = _runs_under(parent, failing_run, "20261128T235959Z", "20261129T001500Z")
    code, out, _ = _show(capsys, str(parent))
    assert code == ExitCode.OK
    lines = out.splitlines()
    assert lines[0] == f"showing {newest}, the newest of the 2 runs in {parent}"
    assert f"report: {newest / 'report.json'}" in lines
    code, out, err = _show(capsys, str(parent), "--json")
    assert code == ExitCode.OK and err == f"{lines[0]}\n"  # aside: stdout stays JSON
    assert json.loads(out)["report"] == str(newest / "report.json")


def test_a_directory_of_runs_in_no_known_order_is_one_line_naming_them(
    failing_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _runs_under(tmp_path / "results", failing_run, "cpu-pilot", "cpu-retry")
    code, out, err = _show(capsys, str(tmp_path / "results"))
    assert code == ExitCode.INPUT_ERROR and out == ""
    assert err == (f"ckit: error: {tmp_path / 'results'}: no report, but 2 runs (cpu-pilot, "
                   f"cpu-retry); name one, e.g. ckit show {tmp_path / 'results' / 'cpu-retry'}\n")


def test_a_directory_with_neither_report_nor_run_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "results" / "cpu" / "workers").mkdir(parents=True)  # not a run: no report
    code, out, err = _show(capsys, str(tmp_path / "results" / "cpu"))
    assert code == ExitCode.INPUT_ERROR and out == ""
    assert err == (f"ckit: error: {tmp_path / 'results' / 'cpu' / 'report.json'}: not found; "
                   "give a run directory or its report.json\n")
