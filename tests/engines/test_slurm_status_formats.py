"""``ckit slurm status`` finds the shards' and the merge's reports in whichever format their
standard declares: a v3 body as well as report.json. Slurm's answer is faked (every job gone);
the real cluster's runs are ``test_slurm.py``'s."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "verification"))

from body_helpers import body_report  # noqa: E402

import kit.engines.slurm_status as slurm_status  # noqa: E402
from kit.engines.interface import MERGED_DIR, shard_dir_name  # noqa: E402
from kit.engines.slurm import SubmittedJobs  # noqa: E402
from kit.engines.slurm_status import GONE, StatusExit, run_status  # noqa: E402
from kit.formats import write_report_files  # noqa: E402
from kit.standard import load_standard  # noqa: E402


@pytest.mark.usefixtures("private_config")
@pytest.mark.parametrize("version", ["v2", "v3"])
def test_status_sees_reports_of_either_format(version: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    report: dict[str, Any] = body_report()
    if version != "v3":
        report = {**report, "standard": {"version": version,
                                         "torch_release": load_standard(version).torch_release}}
    monkeypatch.setattr(slurm_status, "_squeue", lambda job_id: {})  # every job ended, forgotten
    write_report_files(report, tmp_path / shard_dir_name("0", 2))
    write_report_files(report, tmp_path / MERGED_DIR)
    status = run_status(SubmittedJobs("1", "2", 2, str(tmp_path), "2026-01-01T00:00:00+00:00"))
    assert [(s.state, s.has_report) for s in status.shards] == [(GONE, True), (GONE, False)]
    assert status.merge.has_report and status.merge.grade == report["grade"]["name"]
    assert status.outcome == StatusExit.DONE
