"""Reports for the everyday commands, built by the kit's own builder over the standard's ids.

A plain module (not conftest) so test files can import it by a name no other area uses.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kit.clock import RunDate
from kit.device import DeviceInfo
from kit.grading import build_report, collect_environment
from kit.patterns import matches_any
from kit.results import Status, TestRecord
from kit.standard import load_standard
from kit.vendors import SkipManifest, load_vendor

#: The run the reports describe: two ops of the unit tier, so they stay small.
SELECT = ("unit/opinfo/add/float32/*", "unit/opinfo/sin/float64/*")


def selected_ids(select: tuple[str, ...] = SELECT) -> list[str]:
    return [t for t in load_standard().test_ids("unit") if matches_any(t, select)]


def numeric_failure(test_id: str, abs_err: float, rel_err: float | str) -> TestRecord:
    details = {"max_abs_err": abs_err, "max_rel_err": rel_err, "max_ulps": 12.0}
    return TestRecord(test_id, Status.FAIL_NUMERIC, 0.5, "elements outside the bound", details)


def records_with(outcomes: Mapping[str, TestRecord], ids: list[str]) -> list[TestRecord]:
    """Every id passes, except those ``outcomes`` gives a record for."""
    assert set(outcomes) <= set(ids), "an outcome for a test the run does not hold"
    return [outcomes.get(t) or TestRecord(t, Status.PASS, 0.25) for t in ids]


def report_of(records: list[TestRecord], select: tuple[str, ...] = SELECT,
              **run_changes: Any) -> dict[str, Any]:
    """The report the kit builds for ``records`` (cpu profile, real environment, narrowed)."""
    finished = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(minutes=5)
    run = {
        "tiers": ["unit"],
        "select": list(select),
        "timeout_s": 60.0,
        "started_at": (finished - dt.timedelta(minutes=5)).isoformat(),
        "finished_at": finished.isoformat(),
        "workers": 1,
        "complete": False,
        **run_changes,
    }
    return build_report(
        records=records,
        standard=load_standard(),
        vendor=dataclasses.replace(load_vendor("cpu")),
        skips=SkipManifest(entries=()),
        environment=collect_environment(DeviceInfo("cpu", 1, "x86_64")),
        run=run,
        clock=RunDate(finished.date()),
    )


def write_report(run_dir: Path, report: Mapping[str, Any]) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / "report.json"
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return path
