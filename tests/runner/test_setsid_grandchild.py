"""Vendor code left running cannot outlive a run: a ``setsid`` grandchild of a worker (outside
its process group and session, orphaned) is ended before the run's report is written, so it can
never rewrite a finished run's (or shard's) directory. One real ``ckit run`` of one test."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from runner_helpers import FIXTURES, run_ckit

pytestmark = pytest.mark.slow(seconds=25)  # one real run

VENDOR = str(FIXTURES / "vendors" / "setsid-grandchild")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture
def pid_dir(tmp_path: Path) -> Iterator[Path]:
    directory = tmp_path / "grandchildren"
    directory.mkdir()
    yield directory
    for entry in directory.glob("[0-9]*"):  # never leave one behind, whatever the test found
        if entry.name.isdigit() and _alive(int(entry.name)):
            os.kill(int(entry.name), signal.SIGKILL)


def test_setsid_grandchild_is_ended_before_the_shard_report(
    tmp_path: Path, pid_dir: Path
) -> None:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
           "CKIT_TEST_GRANDCHILD_PIDS": str(pid_dir)}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(FIXTURES / "python"), *filter(None, [env.get("PYTHONPATH")])]
    )
    out = tmp_path / "shard-0-of-1"
    done = run_ckit(["run", "--vendor", VENDOR, "--tier", "unit", "--select",
                     "unit/opinfo/add/float32/0", "--shard", "0/1", "--no-sign",
                     "--out", str(out)], env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (out / "report.dsse.json").is_file()
    pids = [int(p.name) for p in pid_dir.iterdir() if p.name.isdigit()]
    assert pids, "the vendor's worker left no grandchild: the attack did not run"
    assert not [pid for pid in pids if _alive(pid)]
