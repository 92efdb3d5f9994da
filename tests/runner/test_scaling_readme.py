"""The README's "Scaling out" block as written, in a fresh clone of the kit: simnpu's narrowed run
in four signed shards, their merge (one report, signed again and verified with the clone's
keyring), and the same tests on four simulated boards, one worker each.

In ``make test-full``: CI's heavy suite merges shards of its own (``tests/runner/test_merge.py``)
and runs two boards (``tests/runner/test_devices.py``). The block runs under ``bash -u`` without
``-e``: its runs are narrowed, so the last exits ``PARTIAL`` (12), the block's own exit code;
every command's outcome is checked in what it wrote.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from readme_clone import fresh_clone, readme_block, verify_in_clone

from kit.errors import ExitCode
from kit.patterns import matches
from kit.standard import load_standard

pytestmark = [pytest.mark.slow(seconds=300), pytest.mark.full]

SCALING_HEADING = "## Scaling out: shards, several devices, merge"
#: The block's selection (its --select), read back to check what the runs covered.
SELECTED = "unit/opinfo/mul/float32/*"


def _records(run: Path) -> dict[str, dict[str, Any]]:
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    return {record["id"]: record for record in report["records"]}


def test_the_scaling_out_block_runs_as_written(tmp_path: Path) -> None:
    block = readme_block(SCALING_HEADING)
    assert f"--select '{SELECTED}'" in block
    kit = fresh_clone(tmp_path / "kit")
    env = {**{k: v for k, v in os.environ.items() if k != "SIMNPU_FAULTS"},
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    done = subprocess.run(["bash", "-u", "-c", block], cwd=kit, env=env, capture_output=True,
                          text=True, timeout=1800, check=False)
    assert done.returncode == ExitCode.PARTIAL, done.stdout[-2000:] + done.stderr[-3000:]

    results = kit / "results"
    expected = {i for i in load_standard().test_ids("unit") if matches(i, SELECTED)}
    shards = [_records(results / "shards" / f"shard-{k}-of-4") for k in range(4)]
    assert sorted(i for shard in shards for i in shard) == sorted(expected)  # each test once
    merged = _records(results / "shards" / "merged")
    assert merged == {i: r for shard in shards for i, r in shard.items()}
    verified = verify_in_clone(kit, results / "shards" / "merged", env)
    assert verified.returncode == 0, verified.stdout + verified.stderr

    boards = json.loads((results / "boards" / "report.json").read_text(encoding="utf-8"))
    assert len(boards["run"]["devices"]) == 4, boards["run"]["devices"]
    on_boards = {r["id"]: r["status"] for r in boards["records"]}
    assert on_boards == {i: r["status"] for i, r in merged.items()}
    assert set(on_boards.values()) <= {"PASS", "NOT_APPLICABLE"}, on_boards
