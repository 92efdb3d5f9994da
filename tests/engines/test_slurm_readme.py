"""The README's Slurm block as written, in a fresh clone of the kit, on the one-machine cluster of
``.ci/start-slurm``: simnpu's tests of one op in two signed shards and their merge, submitted,
waited for, and the merged report verified with the clone's keyring.

In ``make test-full``: CI's heavy suite submits sharded runs of its own
(``tests/engines/test_slurm.py``); this block's three ckit runs cost a few minutes beside them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from readme_clone import fresh_clone, readme_block, run_block, verify_in_clone

from kit.patterns import matches
from kit.standard import load_standard

pytestmark = [pytest.mark.slow(seconds=300), pytest.mark.full, pytest.mark.slurm]

SLURM_HEADING = "## Running on a Slurm cluster"
#: The block's selection (its --select), read back to check what the merge covered.
SELECTED = "unit/opinfo/mul/float32/*"


def test_the_slurm_block_runs_as_written_on_the_one_machine_cluster(
    slurm_cluster: None, tmp_path: Path
) -> None:
    block = readme_block(SLURM_HEADING)
    assert f"--select '{SELECTED}'" in block
    kit = fresh_clone(tmp_path / "kit")
    env = {**{k: v for k, v in os.environ.items() if k != "SIMNPU_FAULTS"},
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    done = run_block(block, kit, env, timeout=1800)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert done.stdout.splitlines()[-1].startswith("done: merged report in ")

    merged = kit / "results" / "slurm-run" / "merged"
    report = json.loads((merged / "report.json").read_text(encoding="utf-8"))
    expected = {i for i in load_standard().test_ids("unit") if matches(i, SELECTED)}
    assert {r["id"] for r in report["records"]} == expected
    assert {r["status"] for r in report["records"]} <= {"PASS", "NOT_APPLICABLE"}
    verified = verify_in_clone(kit, merged, env)
    assert verified.returncode == 0, verified.stdout + verified.stderr
