"""Attacks on attribution (``details.dispatch``, written in the vendor's process), through a
real ``ckit run`` on simnpu: the judge, which never imports vendor code, traces the same call on
CPU and records where the device's list disagrees (``details.dispatch_check``), a finding beside
the verdict (``kit.attribution.check``)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("simnpu") is None, reason="simnpu not installed"),
    pytest.mark.slow(seconds=60),
]

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
VENDOR = FIXTURES / "vendors" / "recorder-patching"
REQUIRED = "unit/opinfo/where/float32/0"  # aten::where.self: v2 requires it natively
NATIVE = "unit/opinfo/add/float32/0"


def _patched_run(tmp_path: Path) -> dict[str, dict[str, Any]]:
    """The records of a run of the recorder-patching vendor, where.self left to simnpu's
    boxed fallback."""
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "SIMNPU_FAULTS": json.dumps([{"op": "where.self", "kind": "fallback"}]),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(FIXTURES / "python"),
                                                       os.environ.get("PYTHONPATH")]))}
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "kit", "run", "--vendor", str(VENDOR), "--tier", "unit",
         "--select", REQUIRED, "--select", NATIVE, "--no-sign", "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=900, check=False)
    assert (out / "report.json").exists(), done.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    return {record["id"]: record for record in report["records"]}


def test_vendor_patching_the_recorder_is_caught_by_the_judges_trace(tmp_path: Path) -> None:
    records = _patched_run(tmp_path)
    hidden = records[REQUIRED]
    # The patch hid the fallback from native_required: the verdict is the vendor's to fake...
    assert hidden["status"] == "PASS", hidden["message"]
    assert hidden["details"]["dispatch"] == {"native": ["aten::cholesky"]}
    # ...but the judge's CPU trace of the same call says what the list left out and made up.
    assert hidden["details"]["dispatch_check"] == {"unreached": ["aten::cholesky"],
                                                   "unlisted": ["aten::where.self"]}
    added = records[NATIVE]["details"]
    assert added["dispatch"] == {"native": ["aten::add.Tensor", "aten::cholesky"]}
    assert added["dispatch_check"] == {"unreached": ["aten::cholesky"]}
