"""Helpers for the runner tests (a unique module name: several test dirs have a conftest)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from planting_helpers import PlantedRun

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


#: The fault scenarios modules check on one faulty simnpu run (the ``simnpu_faults_out``
#: fixture), registered at import (``plant_simnpu_faults``).
FAULTY_RUN = PlantedRun()
#: The faulty run's per-test limit: ample for one small op on a loaded machine, short for a hang.
HANG_TIMEOUT_S = 10


def plant_simnpu_faults(rules: list[dict[str, Any]], selects: list[str]) -> None:
    FAULTY_RUN.plant(rules, selects)


def run_ckit(
    args: list[str], env: dict[str, str], **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kit", *args], env=env, capture_output=True, text=True, **kwargs
    )


def records_by_id(out_dir: Path) -> dict[str, dict[str, Any]]:
    report = json.loads((out_dir / "report.json").read_text())
    return {record["id"]: record for record in report["records"]}
