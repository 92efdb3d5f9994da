"""A compile that never ends (simnpu's dynamo backend hangs on argmin): the test is TIMEOUT at
the compile tier's limit, its worker replaced, and the run goes on to the next test and ends
with every record. Heavy: the limit is waited out, and the run's kit home gives the compile tier
a short one (``LIMIT_S``), which no legitimate compile of the tier's own runs would fit on a busy
machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from kit_homes import kit_home_with_limits

pytestmark = [pytest.mark.heavy, pytest.mark.slow(seconds=40)]

pytest.importorskip("simnpu", reason="install the demo vendor: ckit vendors install simnpu")

REPOSITORY = Path(__file__).resolve().parents[3]
#: The compile tier's limit in the run's standard (seconds).
LIMIT_S = 10
NEVER_COMPILES = "compile/opinfo/argmin/float32/0"
#: Run after the hang (ids run in sorted order), in the worker that replaced the killed one.
AFTER = "unit/opinfo/add/float32/0"
FAULTS = [{"op": "compile::argmin", "kind": "hang"}]


def test_a_compile_that_never_ends_is_a_timeout_and_the_run_goes_on(tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "CKIT_HOME": str(kit_home_with_limits(tmp_path / "home", compile=LIMIT_S)),
           "CKIT_VENDORS_DIR": str(REPOSITORY / "vendors"), "SIMNPU_FAULTS": json.dumps(FAULTS),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    done = subprocess.run(
        [sys.executable, "-m", "kit", "run", "--vendor", "simnpu", "--tier", "compile,unit",
         "--select", NEVER_COMPILES, "--select", AFTER, "--no-sign", "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=600, check=False)
    assert (out / "report.json").exists(), done.stderr[-3000:]
    report: dict[str, Any] = json.loads((out / "report.json").read_text(encoding="utf-8"))
    records = {record["id"]: record for record in report["records"]}
    assert set(records) == {NEVER_COMPILES, AFTER}
    hung = records[NEVER_COMPILES]
    assert hung["status"] == "TIMEOUT", hung["message"]
    assert hung["message"] == f"no result within {LIMIT_S} s; worker killed"
    assert "simnpu: injected fault hang in compile::argmin" in hung["details"]["worker_log_tail"]
    assert records[AFTER]["status"] == "PASS", records[AFTER]["message"]
