"""``ckit run --list`` and ``ckit run --rerun-failed``, through the real CLI (the rerun runs)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import yaml
from cli_helpers import numeric_failure, records_with, report_of, selected_ids, write_report

from kit.cli import main
from kit.cli.cmd_run import default_tiers
from kit.errors import ExitCode
from kit.runner.config import load_run_file
from kit.standard import load_standard

REPO = Path(__file__).resolve().parents[2]
SKIPPED = "unit/opinfo/sin/float64/*"
EXPIRED = "unit/opinfo/cos/float64/*"


@pytest.fixture
def vendors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The cpu profile as vendor ``lab``, without float16, skipping sin and (expired) cos."""
    root = tmp_path / "vendors"
    (root / "lab").mkdir(parents=True)
    profile = yaml.safe_load((REPO / "vendors" / "cpu" / "vendor.yaml").read_text())
    profile.update(id="lab", dtypes=[d for d in profile["dtypes"] if d != "float16"])
    (root / "lab" / "vendor.yaml").write_text(yaml.safe_dump(profile))
    latest = load_standard().latest_skip_expiry.isoformat()
    entries = [
        {"test": SKIPPED, "reason": "precision", "tracking": "https://t.example/1",
         "expires": latest},
        {"test": EXPIRED, "reason": "precision", "tracking": "https://t.example/2",
         "expires": "2020-01-01"},
    ]
    (root / "lab" / "skips.yaml").write_text(yaml.safe_dump({"skips": entries}))
    monkeypatch.setenv("CKIT_VENDORS_DIR", str(root))
    return root


def _main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_list_gives_each_planned_test_the_runs_decision(
    vendors: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    select = ["unit/opinfo/sin/float64/0", "unit/opinfo/cos/float64/0",
              "unit/opinfo/sin/float16/0", "unit/opinfo/sin/float32/0"]
    args = [arg for pattern in select for arg in ("--select", pattern)]
    code, out, err = _main(capsys, "run", "--vendor", "lab", "--tier", "unit", *args, "--list",
                           "--json")
    listed = json.loads(out)
    assert code == ExitCode.OK
    decisions = {t["id"]: (t["decision"], t["entry"]) for t in listed["tests"]}
    assert decisions == {
        "unit/opinfo/cos/float64/0": ("run", EXPIRED),
        "unit/opinfo/sin/float16/0": ("not-applicable", None),
        "unit/opinfo/sin/float32/0": ("run", None),
        "unit/opinfo/sin/float64/0": ("skipped", SKIPPED),
    }
    why = {t["id"]: t["why"] for t in listed["tests"]}
    assert why["unit/opinfo/sin/float16/0"] == \
        "not applicable: vendor lab does not claim dtype float16"
    assert why["unit/opinfo/cos/float64/0"].startswith(f"skip entry {EXPIRED!r} expired on")
    assert err == "4 test(s): 1 not-applicable, 2 run, 1 skipped\n"
    code, text, _ = _main(capsys, "run", "--vendor", "lab", "--tier", "unit", *args, "--list")
    assert f"skipped         unit/opinfo/sin/float64/0  by manifest entry {SKIPPED!r}: " \
        "precision" in text


def test_list_of_nothing_is_refused_in_one_line(
    vendors: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _main(capsys, "run", "--vendor", "lab", "--select", "unit/nothing/*",
                           "--list")
    assert code == ExitCode.INPUT_ERROR and out == "" and err.count("\n") == 1
    tiers = ", ".join(default_tiers())
    assert err.startswith(f"ckit: error: --select matches no test of tier(s) {tiers} in standard ")
    assert "('unit/nothing/*': closest: unit/" in err


@pytest.fixture
def previous_run(tmp_path: Path) -> tuple[Path, list[str]]:
    """A run of add/float32 with two failures (one numeric, one missing), on the cpu profile."""
    ids = selected_ids(("unit/opinfo/add/float32/*",))
    failing, missing = ids[0], ids[1]
    records = records_with({failing: numeric_failure(failing, 0.5, 0.25)},
                           [t for t in ids if t != missing])
    write_report(tmp_path / "prev", report_of(records, select=("unit/opinfo/add/float32/*",)))
    return tmp_path / "prev", sorted([failing, missing])


def test_rerun_failed_lists_only_the_tests_that_did_not_pass(
    previous_run: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    prev, failing = previous_run
    code, out, _ = _main(capsys, "run", "--rerun-failed", str(prev), "--list", "--json")
    assert code == ExitCode.OK
    assert [t["id"] for t in json.loads(out)["tests"]] == failing


def test_rerun_of_a_run_where_everything_passed_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = selected_ids(("unit/opinfo/add/float32/*",))
    report = report_of(records_with({}, ids), select=("unit/opinfo/add/float32/*",))
    write_report(tmp_path / "ok", report)
    code, _, err = _main(capsys, "run", "--rerun-failed", str(tmp_path / "ok"), "--no-sign")
    assert code == ExitCode.INPUT_ERROR
    assert err == (f"ckit: error: {tmp_path / 'ok' / 'report.json'}: no test to rerun: every "
                   "test of that run (within --tier/--select) passed or was skipped\n")


@pytest.mark.slow
def test_rerun_failed_runs_the_failures_into_a_new_dir_linked_to_the_previous_run(
    previous_run: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prev, failing = previous_run
    out_dir = tmp_path / "rerun"
    code, out, _ = _main(capsys, "run", "--rerun-failed", str(prev), "--out", str(out_dir),
                         "--no-sign", "--json")
    outcome = json.loads(out)
    # Narrowed to the failures, which pass now: partial, not non-conformant's exit 1.
    assert code == outcome["exit_code"] == ExitCode.PARTIAL
    assert (outcome["grade"], outcome["qualifier"], outcome["earned"]) == (
        "non-conformant", "partial", "conformant")
    # The finished run's evidence is gone (one scale test's is hundreds of MB); its logs, plan
    # and journal stay, and show and diff below read the run as before.
    kept = sorted(path.name for path in (out_dir / "workers").iterdir())
    assert not [name for name in kept if name.startswith("evidence-")], kept
    assert "worker-1.log" in kept and "planned-ids.txt" in kept
    assert (out_dir / "journal.jsonl").stat().st_size > 0
    config, _, _ = load_run_file(out_dir)
    digest = hashlib.sha256((prev / "report.json").read_bytes()).hexdigest()
    assert config.rerun_of is not None
    assert (config.rerun_of.dir, config.rerun_of.report_sha256) == (str(prev.resolve()), digest)
    # The link is in the signed report too, not only in run.json beside it.
    report = json.loads((out_dir / "report.json").read_text())
    assert report["run"]["rerun_of"] == {"dir": str(prev.resolve()), "report_sha256": digest}
    code, out, _ = _main(capsys, "show", str(out_dir), "--json")
    shown = json.loads(out)
    assert shown["run"]["select"] == failing  # narrowed to exactly the failures
    assert shown["failures"]["tests"] == 0  # add/float32 passes on the cpu backend
    assert shown["rerun_of"] == {"dir": str(prev.resolve()), "report_sha256": digest}
    code, out, _ = _main(capsys, "diff", str(prev), str(out_dir), "--json")
    assert code == ExitCode.OK
    diff = json.loads(out)
    assert [c["id"] for c in diff["improved"] + diff["appeared"]] == failing
    assert diff["vanished"] == []  # the tests it did not rerun are outside its selection


def test_under_a_standard_older_than_a_tier_the_run_defaults_to_its_tiers_and_refuses_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from kit.standard.catalogue import standard_directory
    from kit.tiers.registry import complete_run_tiers

    home = tmp_path / "home"
    shutil.copytree(standard_directory("v1"), home / "standards" / "v1")
    shutil.copy(standard_directory("v1").parent / "released-kits.yaml", home / "standards")
    shutil.copytree(REPO / "vendors" / "cpu", home / "vendors" / "cpu")
    monkeypatch.setenv("CKIT_HOME", str(home))  # v1 alone: the current standard
    v1 = load_standard()
    assert v1.version == "v1"
    newer = [tier for tier in complete_run_tiers() if not v1.carries(tier)]
    assert default_tiers() == tuple(t for t in complete_run_tiers() if t not in newer)
    code, out, err = _main(capsys, "run", "--vendor", "cpu", "--tier", f"unit,{newer[0]}",
                           "--list")
    assert code == ExitCode.INPUT_ERROR and out == "" and err.count("\n") == 1
    assert err == (f"ckit: error: --tier: standard v1 has no {newer[0]} tier (of these it "
                   "carries unit)\n")
