"""Fixtures for the Slurm engine's tests: a cluster that answers, and the real CLI.

Tests marked ``slurm`` need ``sinfo`` to show a responding node; without one they skip with the
one-line reason, and fail where ``CKIT_REQUIRE_SLURM=1`` (CI: ``.ci/run`` starts a one-machine
cluster with ``.ci/start-slurm``).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from slurm_helpers import CkitCli, ckit_cli


def _cluster_problem() -> str | None:
    """Why no Slurm cluster answers here; None when a node responds."""
    try:
        done = subprocess.run(
            ["sinfo", "--noheader", "--responding", "--format=%N"],
            capture_output=True, text=True, timeout=30, check=False,
        )
    except FileNotFoundError:
        return "sinfo not found: no Slurm client here"
    except subprocess.TimeoutExpired:
        return "sinfo did not answer within 30s"
    if done.returncode != 0:
        return f"sinfo failed: {(done.stderr.strip().splitlines() or ['no output'])[-1]}"
    return None if done.stdout.strip() else "sinfo shows no responding node"


@pytest.fixture(scope="session")
def slurm_cluster() -> None:
    # CI sets CKIT_REQUIRE_SLURM=1 (.ci/run): there, no cluster is a failure, not a skip.
    problem = _cluster_problem()
    if problem is None:
        return
    if os.environ.get("CKIT_REQUIRE_SLURM") == "1":
        pytest.fail(problem, pytrace=False)
    pytest.skip(f"{problem} (.ci/start-slurm starts one; CKIT_REQUIRE_SLURM=1 makes this a "
                "failure)")


@pytest.fixture
def ckit(tmp_path: Path) -> CkitCli:
    return ckit_cli(tmp_path)
