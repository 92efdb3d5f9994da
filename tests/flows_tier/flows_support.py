"""Helpers for the flows tier tests (a unique module name: several test dirs have helpers)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FLOWS = "executorch_xnnpack,executorch_xnnpack_int8,onnxruntime_cpu"


def ckit_env(base: Path) -> dict[str, str]:
    """The environment of a ``ckit`` subprocess: its own keys and program cache, the fixture
    vendors' modules importable."""
    env = {**os.environ, "XDG_CONFIG_HOME": str(base / "cfg"), "XDG_CACHE_HOME": str(base)}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(FIXTURES / "python"), *filter(None, [env.get("PYTHONPATH")])]
    )
    return env


def run_ckit(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kit", *args], env=env, capture_output=True, text=True,
        timeout=1200, check=False,
    )


def report_of(out_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out_dir / "report.json").read_text())
    return data


def records_by_id(out_dir: Path) -> dict[str, dict[str, Any]]:
    return {record["id"]: record for record in report_of(out_dir)["records"]}
