"""The README's flows block as written, in a fresh clone of the kit: the whole flows tier on
the three reference export backends, their programs kept (``--golden``), then every stored
program run again (``ckit golden check``).

In ``make test-full`` only (about 40 minutes on 2 cores, cold: every program lowered and, for
int8, calibrated). CI's suites lower small subjects through each flow
(``test_flows_pipeline.py``, ``test_flows_cache.py``). The block runs under ``bash -u`` without
``-e``: the backends' own findings make the run non-conformant, and the golden check after it
must still run; each command's outcome is checked in what it wrote. The findings the README
names are the backends' and are asserted as it says them.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from readme_clone import fresh_clone, readme_block

pytestmark = [pytest.mark.slow(seconds=2400), pytest.mark.full]

FLOWS_HEADING = "## Flows: export backends"
FLOWS = ("executorch_xnnpack", "executorch_xnnpack_int8", "onnxruntime_cpu")


def _records(run: Path) -> dict[str, dict[str, Any]]:
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    return {record["id"]: record for record in report["records"]}


def _statuses(records: dict[str, dict[str, Any]], flow: str, subject: str) -> set[str]:
    """The statuses of ``flows/<flow>/<subject>...``'s tests."""
    return {r["status"] for i, r in records.items() if i.startswith(f"flows/{flow}/{subject}")}


def test_the_flows_block_runs_as_written(tmp_path: Path) -> None:
    kit = fresh_clone(tmp_path / "kit")
    done = subprocess.run(["bash", "-u", "-c", readme_block(FLOWS_HEADING)], cwd=kit,
                          capture_output=True, text=True, timeout=4800, check=False)
    tail = done.stdout[-3000:] + done.stderr[-3000:]

    # The last command is the golden check: every stored program ran again, unchanged.
    assert done.returncode == 0, tail
    records = _records(kit / "results" / "cpu")
    assert {i.split("/")[1] for i in records} == set(FLOWS)
    statuses = {r["status"] for r in records.values()}
    assert "PASS" in statuses and "NOT_DELEGATED" in statuses, statuses
    # The backends' findings the README names, as it names them.
    assert "CRASH" in _statuses(records, "executorch_xnnpack", "opinfo/logsumexp/"), tail
    for op in ("batch_norm", "avg_pool2d"):
        found = {r["status"] for i, r in records.items()
                 if i.startswith("flows/onnxruntime_cpu/") and i.split("/")[3].endswith(op)}
        assert "FAIL_NUMERIC" in found, (op, found)
    assert "LOWER_FAIL" in _statuses(records, "executorch_xnnpack_int8", "models/hf/bert")
