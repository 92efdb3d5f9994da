"""Helpers for the flows tier tests (a unique module name: several test dirs have helpers)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
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


ABSENT_FLOW_SOURCE = '''\
from kit.flows.executorch_xnnpack import ExecutorchXnnpackFlow


class AcmeAbsentFlow(ExecutorchXnnpackFlow):
    """A vendor flow whose runtime package is not installed here."""

    name = "acme_absent"

    def unavailable_reason(self):
        return "acme_runtime is not installed (flow acme_absent)"
'''


def install_absent_flow(root: Path) -> None:
    """A real distribution registering flow ``acme_absent`` under ``ckit.flows``; found by
    ``importlib.metadata`` once ``root`` is on sys.path."""
    (root / "acme_absent_flow.py").write_text(ABSENT_FLOW_SOURCE, encoding="utf-8")
    info = root / "acme_absent-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-absent\nVersion: 1.0\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[ckit.flows]\nacme_absent = acme_absent_flow:AcmeAbsentFlow\n", encoding="utf-8"
    )
