"""The README's flows block as written, in a fresh clone of the kit: the flows tier and the
models tier through the three reference export backends, their programs kept (``--golden``),
then every stored program run again (``ckit golden check``).

In ``make test-full`` only (27 minutes on 2 cores beside its other tests, cold: every program
lowered and, for int8, calibrated; 8 with most programs cached). CI's suites lower small
subjects through each flow (``test_flows_pipeline.py``, ``test_flows_cache.py``). The block
runs under ``bash -u`` without ``-e``: the backends' own findings make the run non-conformant,
and the golden check after it must still run; each command's outcome is checked in what it
wrote. The findings the README names are the backends' and are asserted as it says them.
"""

from __future__ import annotations

import json
import re
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


def _statuses(records: dict[str, dict[str, Any]], prefix: str) -> set[str]:
    """The statuses of the tests whose id starts with ``prefix``."""
    return {r["status"] for i, r in records.items() if i.startswith(prefix)}


def test_the_flows_block_runs_as_written(tmp_path: Path) -> None:
    kit = fresh_clone(tmp_path / "kit")
    done = subprocess.run(["bash", "-u", "-c", readme_block(FLOWS_HEADING)], cwd=kit,
                          capture_output=True, text=True, timeout=4800, check=False)
    tail = done.stdout[-3000:] + done.stderr[-3000:]

    # The last command is the golden check: every stored program ran again, unchanged.
    assert done.returncode == 0, tail
    records = _records(kit / "results" / "cpu")
    flows = {i.split("/")[1] for i in records if i.startswith("flows/")}
    assert flows == set(FLOWS), flows
    models = [i for i in records if i.startswith("models/hf/")]
    assert {i.rsplit("/", 1)[1] for i in models} >= set(FLOWS)
    passed = [i for i in models if records[i]["status"] == "PASS"]
    assert {i.rsplit("/", 1)[1] for i in passed} == set(FLOWS), passed  # every flow lowers some
    statuses = {r["status"] for r in records.values()}
    assert "NOT_DELEGATED" in statuses, statuses
    # The backends' findings the README names, as it names them.
    assert _statuses(records, "flows/executorch_xnnpack/opinfo/logsumexp/") == {"CRASH"}
    for op in ("batch_norm", "avg_pool2d"):
        prefix = f"flows/onnxruntime_cpu/opinfo/nn.functional.{op}/"
        assert _statuses(records, prefix) == {"FAIL_NUMERIC"}, op
    for model in ("bert", "gpt2", "llama", "t5", "whisper"):
        assert records[f"models/hf/{model}/executorch_xnnpack_int8"]["details"]["stage"] \
            == "LOWER_FAIL", model
    assert records["models/hf/gpt2/executorch_xnnpack"]["details"]["stage"] == "LOWER_FAIL"
    assert records["models/hf/t5/onnxruntime_cpu"]["details"]["stage"] == "LOWER_FAIL"
    golden = r"golden check PASSED: [1-9]\d* entries, [1-9]\d* re-run, 0 failed"
    assert re.search(golden, done.stdout), tail
