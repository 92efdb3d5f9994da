"""A real `ckit run` whose date was set back with CKIT_TODAY: recorded, and not certifiable."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys

import pytest

from kit.grading.grading import grade_report
from kit.standard import load_standard

SET_BACK = "2024-12-31"


@pytest.fixture(scope="module")
def set_back_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict]:
    out = tmp_path_factory.mktemp("clock") / "results"
    env = {**os.environ, "CKIT_TODAY": SET_BACK}
    done = subprocess.run(
        [sys.executable, "-m", "kit", "run", "--vendor", "cpu", "--tier", "unit",
         "--select", "unit/opinfo/add/float32/?", "--no-sign", "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert (out / "report.json").is_file(), done.stderr[-3000:]
    return done.returncode, json.loads((out / "report.json").read_text(encoding="utf-8"))


def test_clock_set_back_with_CKIT_TODAY_is_recorded_and_not_certifiable(set_back_run):
    code, report = set_back_run
    assert code == 11  # the not-certifiable grade's exit code
    clock_today = report["run"]["clock_today"]
    # The system clock's date, whatever CKIT_TODAY said (a run may cross midnight).
    assert abs(dt.date.fromisoformat(clock_today) - dt.date.today()) <= dt.timedelta(days=1)
    assert (report["run"]["today"], report["run"]["clock_override"]) == (SET_BACK, True)
    assert report["grade"]["name"] == "not-certifiable"
    assert report["grade"]["reasons"][0].startswith(
        f"the run's date was set by CKIT_TODAY to {SET_BACK} while the system clock said "
        f"{clock_today}"
    )
    assert {r["status"] for r in report["records"]} == {"PASS"}


def test_the_set_back_report_grades_the_same_when_read_from_disk(set_back_run):
    _, report = set_back_run
    assert grade_report(load_standard(), report) == report["grade"]
