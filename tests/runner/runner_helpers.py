"""Helpers for the runner tests (a unique module name: several test dirs have a conftest)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@dataclass(frozen=True)
class FaultScenario:
    """simnpu fault rules and the tests (ids or patterns) that show what they do."""

    rules: tuple[dict[str, Any], ...]
    selects: tuple[str, ...]


#: The scenarios modules check on one faulty simnpu run (the ``simnpu_faults_run`` fixture),
#: registered at import. Each scenario's rules fire only on ops, dtypes or inputs no other
#: scenario's tests use (a float32 rule also fires on a float32 operand of a mixed-dtype call).
SIMNPU_FAULTS: list[FaultScenario] = []
#: The faulty run's per-test limit: ample for one small op on a loaded machine, short for a hang.
HANG_TIMEOUT_S = 10


def plant_simnpu_faults(rules: list[dict[str, Any]], selects: list[str]) -> None:
    SIMNPU_FAULTS.append(FaultScenario(tuple(rules), tuple(selects)))


def planted_simnpu_rules() -> list[dict[str, Any]]:
    """Every registered scenario's rules: the faulty run's ``SIMNPU_FAULTS``."""
    return [rule for scenario in SIMNPU_FAULTS for rule in scenario.rules]


def run_ckit(
    args: list[str], env: dict[str, str], **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kit", *args], env=env, capture_output=True, text=True, **kwargs
    )


def records_by_id(out_dir: Path) -> dict[str, dict[str, Any]]:
    report = json.loads((out_dir / "report.json").read_text())
    return {record["id"]: record for record in report["records"]}
