from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture
def ckit_env(tmp_path: Path) -> dict[str, str]:
    """Environment for a ``ckit`` subprocess: fixture modules importable, private config dir."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(FIXTURES / "python"), *filter(None, [env.get("PYTHONPATH")])]
    )
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    env.pop("CKIT_SIGNING_KEY", None)
    return env


def run_ckit(
    args: list[str], env: dict[str, str], **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kit", *args], env=env, capture_output=True, text=True, **kwargs
    )


def records_by_id(out_dir: Path) -> dict[str, dict[str, Any]]:
    report = json.loads((out_dir / "report.json").read_text())
    return {record["id"]: record for record in report["records"]}
