"""``ckit show --format comment --against BASELINE`` verifies the baseline (signature, vendor,
standard) or says in its first line that it is not verified: a canary compared with a made-up
baseline would look clean. Real signed runs, the real CLI."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import numeric_failure, records_with, report_of, selected_ids

from kit.cli import main
from kit.clock import RunDate
from kit.device import DeviceInfo
from kit.errors import ExitCode
from kit.formats.files import write_report_files
from kit.grading import build_report, collect_environment
from kit.standard import load_standard
from kit.vendors import SkipManifest, load_vendor

FAILING = "unit/opinfo/add/float32/0"
NOT_VERIFIED = "**Baseline not verified**: "


def _keys(tmp_path: Path, vendor: str) -> Path:
    """``vendor``'s key, its public half filed in the test's keyring."""
    key = tmp_path / "keys" / f"{vendor}.pem"
    assert main(["keys", "generate", "--vendor", vendor, "--out", str(key),
                 "--keyring", str(tmp_path / "keyring")]) == ExitCode.OK
    return key


def _run(directory: Path, report: dict[str, Any], key: Path | None) -> Path:
    write_report_files(report, directory)
    if key is not None:
        assert main(["sign", str(directory), "--key", str(key)]) == ExitCode.OK
    return directory


def _clean_report(vendor: str = "cpu") -> dict[str, Any]:
    """Every selected test passing, the run ``report_of`` describes, of ``vendor``."""
    report = report_of(records_with({}, selected_ids()))
    finished = dt.datetime.fromisoformat(report["run"]["finished_at"])
    return build_report(
        records=records_with({}, selected_ids()), standard=load_standard(),
        vendor=dataclasses.replace(load_vendor(vendor)), skips=SkipManifest(entries=()),
        environment=collect_environment(DeviceInfo("cpu", 1, "x86_64")), run=report["run"],
        clock=RunDate(finished.date()),
    )


def _comment(tmp_path: Path, baseline: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    canary = report_of(records_with({FAILING: numeric_failure(FAILING, 0.5, "inf")},
                                    selected_ids()), canary=True)
    _run(tmp_path / "canary", canary, None)
    capsys.readouterr()
    code = main(["show", str(tmp_path / "canary"), "--format", "comment", "--against",
                 str(baseline), "--keyring", str(tmp_path / "keyring")])
    assert code == ExitCode.OK
    return capsys.readouterr().out.splitlines()


def test_comment_against_a_verified_baseline_names_its_signer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = _run(tmp_path / "baseline", _clean_report(), _keys(tmp_path, "cpu"))
    lines = _comment(tmp_path, baseline, capsys)
    assert lines[0].startswith("### ckit canary run (not a certificate): `cpu`"), lines
    assert lines[-1].startswith("Baseline verified: signed by key ")
    assert "of vendor cpu, standard " in lines[-1]
    assert "**Regressed (1):**" in lines


def test_comment_against_an_unsigned_baseline_says_so_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _keys(tmp_path, "cpu")
    baseline = _run(tmp_path / "baseline", _clean_report(), None)
    lines = _comment(tmp_path, baseline, capsys)
    assert lines[0].startswith(NOT_VERIFIED), lines
    assert lines[0].endswith("; the comparison below is not evidence.")
    assert lines[2].startswith("### ckit canary run")


def test_comment_against_a_baseline_edited_after_signing_says_so_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The vendor's own signed run, its failures edited away after signing."""
    report = report_of(records_with({FAILING: numeric_failure(FAILING, 0.5, "inf")},
                                    selected_ids()))
    baseline = _run(tmp_path / "baseline", report, _keys(tmp_path, "cpu"))
    edited = json.loads((baseline / "report.json").read_text(encoding="utf-8"))
    for record in edited["records"]:
        if record["id"] == FAILING:
            record.update(status="PASS", message="", details={})
    (baseline / "report.json").write_text(json.dumps(edited, indent=2) + "\n",
                                          encoding="utf-8")
    lines = _comment(tmp_path, baseline, capsys)
    assert lines[0].startswith(NOT_VERIFIED), lines


def test_comment_against_another_vendors_baseline_says_so_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = _run(tmp_path / "baseline", _clean_report("simnpu"), _keys(tmp_path, "simnpu"))
    lines = _comment(tmp_path, baseline, capsys)
    assert lines[0] == (f"{NOT_VERIFIED}it is vendor simnpu's run, signed for simnpu, not cpu's; "
                        "the comparison below is not evidence."), lines

