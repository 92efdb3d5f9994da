"""``ckit diff A B``: what regressed between two runs, through the real CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_helpers import numeric_failure, records_with, report_of, selected_ids, write_report

from kit.cli import main
from kit.cli.cmd_diff import REGRESSED_EXIT
from kit.errors import ExitCode
from kit.results import Status, TestRecord
from kit.standard import load_standard

IDS = selected_ids()
REGRESSES, IMPROVES, CHANGES, VANISHES, APPEARS = IDS[0], IDS[1], IDS[2], IDS[3], IDS[4]


def _run(tmp_path: Path, name: str, outcomes: dict[str, TestRecord], ids: list[str]) -> Path:
    write_report(tmp_path / name, report_of(records_with(outcomes, ids)))
    return tmp_path / name


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    before = {
        IMPROVES: numeric_failure(IMPROVES, 0.25, 0.5),
        CHANGES: TestRecord(CHANGES, Status.ERROR, 0.1, "RuntimeError"),
    }
    after = {
        REGRESSES: numeric_failure(REGRESSES, 0.125, 0.0625),
        CHANGES: TestRecord(CHANGES, Status.CRASH, 0.1, "signal 11"),
    }
    a = _run(tmp_path, "a", before, [t for t in IDS if t != APPEARS])
    b = _run(tmp_path, "b", after, [t for t in IDS if t != VANISHES])
    return a, b


def _diff(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["diff", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_diff_names_each_change_and_exits_with_the_regression_code(
    two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = two_runs
    code, out, _ = _diff(capsys, str(a), str(b))
    lines = out.splitlines()
    assert code == REGRESSED_EXIT
    unchanged = len(IDS) - 5
    assert lines[2] == (f"1 regressed, 1 improved, 1 changed, 1 appeared, 1 vanished, "
                        f"{unchanged} unchanged")
    assert (f"  {REGRESSES}: PASS -> FAIL_NUMERIC (max_abs_err 0.125  max_rel_err 0.0625  "
            "max_ulps 12)") in lines
    assert (f"  {IMPROVES}: FAIL_NUMERIC (max_abs_err 0.25  max_rel_err 0.5  max_ulps 12) "
            "-> PASS") in lines
    assert f"  {CHANGES}: ERROR -> CRASH" in lines
    assert f"  {APPEARS}: PASS" in lines
    assert f"  {VANISHES}: was PASS" in lines


def test_diff_json_lists_every_category_with_both_sides(
    two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = two_runs
    code, out, _ = _diff(capsys, str(a / "report.json"), str(b), "--json")
    diff = json.loads(out)
    assert code == REGRESSED_EXIT
    assert diff["counts"] == {"regressed": 1, "improved": 1, "changed": 1, "appeared": 1,
                              "vanished": 1}
    assert diff["regressed"] == [{
        "id": REGRESSES,
        "a": {"status": "PASS", "figures": None},
        "b": {"status": "FAIL_NUMERIC",
              "figures": {"max_abs_err": 0.125, "max_rel_err": 0.0625, "max_ulps": 12.0}},
    }]
    assert diff["appeared"][0]["a"] is None and diff["vanished"][0]["b"] is None


def test_nothing_regressed_exits_zero(
    two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = two_runs
    code, out, _ = _diff(capsys, str(b), str(b))
    assert code == ExitCode.OK
    assert out.splitlines()[2] == f"0 regressed, 0 improved, 0 changed, 0 appeared, " \
        f"0 vanished, {len(IDS) - 1} unchanged"


def _other_standard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, report: Path) -> Path:
    """A kit that carries a standard v99 extending the report's; ``report`` relabelled as
    judged by it."""
    home = tmp_path / "home"
    shutil.copytree(Path(__file__).resolve().parents[2] / "standards", home / "standards")
    document = json.loads(report.read_text(encoding="utf-8"))
    parent = document["standard"]["version"]
    (home / "standards" / "v99").mkdir()
    (home / "standards" / "v99" / "standard.yaml").write_text(
        f"version: v99\nextends: {parent}\n")
    monkeypatch.setenv("CKIT_HOME", str(home))
    document["standard"]["version"] = "v99"
    return write_report(tmp_path / "v2run", document)


def test_reports_of_different_standards_are_refused_in_one_line(
    two_runs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    a, b = two_runs
    version = load_standard().version
    other = _other_standard(tmp_path, monkeypatch, b / "report.json")
    code, out, err = _diff(capsys, str(a), str(other))
    assert code == ExitCode.INPUT_ERROR and out == ""
    assert err == (f"ckit: error: {a / 'report.json'} was judged by standard {version} and "
                   f"{other} by standard v99: their tests and bounds differ; pass "
                   "--allow-other-standard to compare anyway\n")
    code, out, _ = _diff(capsys, str(a), str(other), "--allow-other-standard")
    assert code == REGRESSED_EXIT and "standard v99" in out.splitlines()[1]


def test_a_forged_grade_with_a_terminal_escape_is_refused_and_not_echoed(
    two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = two_runs
    document = json.loads((b / "report.json").read_text(encoding="utf-8"))
    document["grade"]["name"] = "\x1b]0;pwned\x07conformant"
    write_report(b, document)
    code, out, err = _diff(capsys, str(a), str(b))
    # The schema holds the grade to the standard's names: the forged one is refused first.
    assert code == ExitCode.INPUT_ERROR and out == ""
    assert err.startswith(f"ckit: error: {b / 'report.json'}: not a report this kit can read")
    assert err.count("\n") == 1 and "\x1b" not in err and "\x07" not in err


def test_a_rerun_is_compared_only_on_the_tests_it_selected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``--rerun-failed`` run selects the failures alone: the tests it never meant to run
    are counted as outside its selection, not listed as vanished."""
    failing = [IMPROVES, CHANGES]
    base = _run(tmp_path, "base", {t: numeric_failure(t, 0.25, 0.5) for t in failing}, IDS)
    write_report(tmp_path / "rerun", report_of(records_with({}, failing), select=tuple(failing)))
    code, out, _ = _diff(capsys, str(base), str(tmp_path / "rerun"), "--json")
    diff = json.loads(out)
    assert code == ExitCode.OK
    assert diff["counts"] == {"regressed": 0, "improved": 2, "changed": 0, "appeared": 0,
                              "vanished": 0}
    assert diff["outside_scope"] == len(IDS) - 2
    code, out, _ = _diff(capsys, str(base), str(tmp_path / "rerun"))
    assert out.splitlines()[2] == (f"0 regressed, 2 improved, 0 changed, 0 appeared, "
                                   f"0 vanished, 0 unchanged, {len(IDS) - 2} outside the "
                                   "other run's selection (not compared)")


def test_diff_rounds_figures_for_people_lists_ids_in_natural_order_and_json_keeps_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    two, ten = "unit/opinfo/add/float32/2", "unit/opinfo/add/float32/10"
    after = {test_id: numeric_failure(test_id, 1.0000000474974513e+297, 10485.7702326819)
             for test_id in (ten, two)}
    a, b = _run(tmp_path, "a", {}, IDS), _run(tmp_path, "b", after, IDS)
    _, out, _ = _diff(capsys, str(a), str(b))
    regressed = [line for line in out.splitlines() if line.startswith("  unit/")]
    assert regressed == [
        f"  {test_id}: PASS -> FAIL_NUMERIC (max_abs_err 1e+297  max_rel_err 1.05e+04  "
        "max_ulps 12)" for test_id in (two, ten)
    ]
    _, out, _ = _diff(capsys, str(a), str(b), "--json")
    figures = [change["b"]["figures"] for change in json.loads(out)["regressed"]]
    assert figures == [{"max_abs_err": 1.0000000474974513e+297,
                        "max_rel_err": 10485.7702326819, "max_ulps": 12.0}] * 2


def test_each_run_is_worded_as_ckit_run_and_show_word_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A narrowed run whose tests pass is partial, in diff as everywhere (kit.grading.wording)."""
    passing = _run(tmp_path, "a", {}, IDS)
    failing = _run(tmp_path, "b", {REGRESSES: numeric_failure(REGRESSES, 0.125, 0.0625)}, IDS)
    _, out, _ = _diff(capsys, str(passing), str(failing))
    a_line, b_line = out.splitlines()[:2]
    assert a_line.endswith(", grade partial (its tests meet conformant)"), a_line
    assert b_line.endswith(", grade non-conformant (partial)"), b_line
