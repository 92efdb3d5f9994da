"""Running selected unit ids on simnpu with planted faults, for the v2 promotion and scale
tests: a real ``python -m kit run`` subprocess, this tree's simnpu first on the path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
SIMNPU_SOURCE = REPO / "vendors" / "simnpu" / "src"


def run_on_simnpu(tmp_path: Path, faults: list[dict[str, Any]], ids: list[str]
                  ) -> dict[str, dict[str, Any]]:
    """The records of ``ids`` run on simnpu under ``faults``, by id."""
    selects = [argument for test_id in ids for argument in ("--select", test_id)]
    env = {
        **os.environ,
        "SIMNPU_FAULTS": json.dumps(faults),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(SIMNPU_SOURCE), os.environ.get("PYTHONPATH")])),
    }
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "kit", "run", "--vendor", "simnpu", "--tier", "unit", *selects,
         "--timeout", "120", "--no-sign", "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=900,
    )
    assert (out / "report.json").is_file(), done.stderr[-3000:]
    records = json.loads((out / "report.json").read_text())["records"]
    return {record["id"]: record for record in records}
