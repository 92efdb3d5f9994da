"""How the distributed tier's ranks start (``kit.tiers.distributed.rank_start``): forked from the
worker where the device's runtime survives a fork, else from ``multiprocessing``'s fork server,
as a real accelerator's runtime needs (CUDA's: "Cannot re-initialize CUDA in forked
subprocess"). simnpu's fork-unsafe mode (``SIMNPU_FORK_UNSAFE=1``, ``simnpu.forks``) makes it such
a runtime: one real ``ckit run`` in that mode, narrowed to a collective and the DDP step (each job
pickled to its rank), passes with its ranks from the fork server; the decision and the mode
themselves are asked in this process, whose simnpu the suite's conftest imported.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import torch
from simnpu.forks import FORK_UNSAFE_ENV
from simnpu.runtime import _is_in_bad_fork  # torch.simnpu's

from kit.report.read import read_report
from kit.results import TestRecord
from kit.rundir import RunDir
from kit.tiers.distributed import rank_start
from kit.vendors import load_vendor

REPOSITORY = Path(__file__).resolve().parents[3]
SELECTED = ("distributed/all_reduce-sum/float32/small/2", "distributed/ddp-linear/float32/step/2")


@pytest.fixture(scope="module")
def fork_unsafe_records(tmp_path_factory: pytest.TempPathFactory) -> dict[str, TestRecord]:
    out = tmp_path_factory.mktemp("fork-unsafe") / "out"
    selects = [arg for test_id in SELECTED for arg in ("--select", test_id)]
    environment = {**os.environ, "CKIT_VENDORS_DIR": str(REPOSITORY / "vendors"),
                   FORK_UNSAFE_ENV: "1"}
    result = subprocess.run(
        [sys.executable, "-m", "kit", "run", "--vendor", "simnpu", "--tier", "distributed",
         *selects, "--no-sign", "--out", str(out)],
        env=environment, capture_output=True, text=True, timeout=600, check=False)
    assert RunDir(out).is_finished(), result.stderr[-3000:]
    # Read as the kit reads any run, whichever format the standard declares (v3: a body).
    return {record.id: record for record in read_report(out).report.records}


@pytest.fixture
def undecided(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process's decisions forgotten before and after: each test decides afresh."""
    monkeypatch.setattr(rank_start, "_DECIDED", {})
    yield


def _in_forked_child(call: Callable[[], str]) -> str:
    """What ``call`` returns (or the error it raises) in a child forked from this process."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            try:
                said = call()
            except RuntimeError as exc:
                said = str(exc)
            os.write(write, said.encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        said_bytes = answer.read()
    os.waitpid(pid, 0)
    return said_bytes.decode()


def _computes() -> str:
    return str(torch.ones(2, device="simnpu").sum().item())


def test_a_device_that_does_not_survive_a_fork_gets_its_ranks_from_the_fork_server(
        fork_unsafe_records: dict[str, TestRecord]) -> None:
    assert {test_id: (r.status.value, r.details["rank_start"])
            for test_id, r in fork_unsafe_records.items()} == dict.fromkeys(
        SELECTED, ("PASS", "forkserver"))


def test_simnpu_fork_unsafe_mode_refuses_a_child_forked_after_use(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _computes()  # this process has used the device
    assert _in_forked_child(_computes) == "2.0"  # fork-safe unless asked
    monkeypatch.setenv(FORK_UNSAFE_ENV, "1")
    assert _in_forked_child(lambda: str(_is_in_bad_fork())) == "True"
    assert _in_forked_child(_computes).startswith(
        "Cannot re-initialize simnpu in forked subprocess")
    assert not _is_in_bad_fork() and _computes() == "2.0"  # the parent is fine


#: A fresh process that has used simnpu, as a worker has at its start, and not autograd: this
#: suite's process may have run backward passes on simnpu, whose autograd threads make any
#: forked child's backward fail (the next test).
_USED_THEN_DECIDE = """
import torch
import simnpu  # noqa: F401
from kit.tiers.distributed.rank_start import rank_start
from kit.vendors import load_vendor

assert torch.ones(2, device="simnpu").sum().item() == 2.0
print(rank_start(load_vendor("simnpu")).method, rank_start(load_vendor("cpu")).method)
"""


def test_ranks_fork_where_the_device_survives_a_fork() -> None:
    environment = {key: value for key, value in os.environ.items() if key != FORK_UNSAFE_ENV}
    done = subprocess.run([sys.executable, "-c", _USED_THEN_DECIDE], capture_output=True,
                          text=True, timeout=300, check=False, cwd=REPOSITORY, env=environment)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["fork", "fork"]  # cpu: no _is_in_bad_fork


@pytest.mark.usefixtures("undecided")
def test_the_worker_asks_once_and_keeps_a_bad_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FORK_UNSAFE_ENV, "1")
    _computes()
    simnpu = load_vendor("simnpu")
    assert rank_start.rank_start(simnpu).method == "forkserver"
    monkeypatch.delenv(FORK_UNSAFE_ENV)  # a runtime once used stays so: never asked again
    assert rank_start.rank_start(simnpu).method == "forkserver"


#: A backward that runs a backward inside itself 70 levels deep: past autograd's reentrant
#: depth (60) it starts the engine's thread pool, after which a forked child's backward is
#: refused ("Unable to handle autograd's threading in combination with fork-based
#: multiprocessing"), as a DDP step's ranks forked from such a worker were.
_REENTRANT_THEN_DECIDE = """
import torch
from kit.tiers.distributed.rank_start import rank_start
from kit.vendors import load_vendor


class Reentrant(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, depth):
        ctx.depth = depth
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        if ctx.depth:
            with torch.enable_grad():
                inner = torch.ones(1, requires_grad=True)
                Reentrant.apply(inner, ctx.depth - 1).sum().backward()
        return grad, None


cpu = load_vendor("cpu")
before = rank_start(cpu).method
Reentrant.apply(torch.ones(1, requires_grad=True), 70).sum().backward()
print(before, rank_start(cpu).method, rank_start(cpu).method)
"""


def test_autograd_threads_started_by_an_earlier_test_send_the_ranks_to_the_fork_server() -> None:
    # In a process of its own: the threads, once started, stay for the process's life.
    done = subprocess.run([sys.executable, "-c", _REENTRANT_THEN_DECIDE], capture_output=True,
                          text=True, timeout=300, check=False, cwd=REPOSITORY)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["fork", "forkserver", "forkserver"]
