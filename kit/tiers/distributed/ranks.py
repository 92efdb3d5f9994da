"""Local rank processes, forked from the worker or from a fresh interpreter: started, watched,
killed, read.

Each test forks its ranks from the worker where the device's runtime survives a fork (torch and
the vendor's modules are already imported there, so a rank costs a fork, not an interpreter's
start). A real accelerator's runtime does not (CUDA, ROCm, XPU, Ascend's: "Cannot re-initialize
CUDA in forked subprocess" once the worker used the device), so there each rank is forked from a
fresh interpreter that never used it and enables the vendor's device as the worker did
(``kit.tiers.distributed.rank_start``: decided once per worker, recorded on each test as
``details.rank_start``). A rank runs one job on the vendor's device in a ``torch.distributed``
process group over loopback and leaves what it computed (or the error it raised) in a file of
the kit's evidence format. The worker watches them all: the first rank that dies ends the test
as CRASH naming it, ranks still running at the limit end it as TIMEOUT naming them, and every
rank left is killed (a rank also dies with its worker: the parent death signal), so no test
leaves a hung run behind.
"""

from __future__ import annotations

import datetime as dt
import os
import signal
import socket
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

from kit.outcomes import KitOutcome
from kit.results import Status
from kit.tiers.distributed.rank_start import RankStart, die_with_parent

#: What a rank runs once its process group is up: its rank in, its outputs out (plain data).
RankJob = Callable[[int], Any]
#: After a rank ends with an error, how long the others may still take (seconds): a rank that
#: waits on a hung peer gives up at the process group's timeout, and the hung one is named then.
GRACE_S = 1.0
#: The share of the test's time limit the ranks get, and the share their process group waits
#: in one collective before it gives up (so a rank that hangs is told from those waiting on it).
RANKS_SHARE = 0.75
GROUP_TIMEOUT_SHARE = 0.35


@dataclass(frozen=True)
class Group:
    """Where and how the ranks meet."""

    backend: str
    ranks: int
    #: Seconds before the test ends with its ranks killed.
    limit_s: float
    #: Seconds a collective waits for its peers before it raises.
    group_timeout_s: float

    @classmethod
    def within(cls, backend: str, ranks: int, test_limit_s: float) -> Group:
        return cls(backend, ranks, test_limit_s * RANKS_SHARE, test_limit_s * GROUP_TIMEOUT_SHARE)


class RankDied(KitOutcome):
    """A rank process ended without finishing (a signal, an exit): the test's CRASH."""

    status = Status.CRASH

    def __init__(self, rank: int, ranks: int, how: str) -> None:
        self.rank = rank
        super().__init__(f"rank {rank} of {ranks} died ({how}); the other ranks were killed")

    def details(self) -> dict[str, Any]:
        return {"rank": self.rank}


class RanksHung(KitOutcome):
    """Ranks still running at the limit, or a grace after a peer gave up waiting on them: the
    test's TIMEOUT, naming them and how long they were waited for."""

    status = Status.TIMEOUT

    def __init__(self, hung: list[int], ranks: int, waited_s: float, errors: Mapping[int, str]
                 ) -> None:
        self.hung = hung
        self.errors = dict(errors)
        names = ", ".join(map(str, hung))
        waited = "; ".join(f"rank {rank}: {error}" for rank, error in sorted(errors.items()))
        super().__init__(f"rank{'s' if len(hung) > 1 else ''} {names} of {ranks} still running "
                         f"after {waited_s:.3g} s; killed" + (f" ({waited})" if waited else ""))

    def details(self) -> dict[str, Any]:
        return {"hung_ranks": self.hung, "rank_errors": {str(r): e for r, e in self.errors.items()}}


class RankRaised(KitOutcome):
    """A rank's job raised (the device refused the collective, the group broke)."""

    def __init__(self, rank: int, error: str, unsupported: bool) -> None:
        self.rank = rank
        self.status = Status.UNSUPPORTED if unsupported else Status.ERROR
        super().__init__(f"rank {rank}: {error}")

    def details(self) -> dict[str, Any]:
        return {"rank": self.rank}


def run_ranks(group: Group, job: RankJob, scratch: Path, start: RankStart) -> list[Any]:
    """Run ``job`` on every rank of ``group``, each started as ``start`` says (one from the fork
    server unpickles the job); per rank, what it returned. Raises the test's outcome where a rank
    died, hung or raised."""
    port = _free_port()
    context = start.context()
    processes = {
        rank: context.Process(target=_rank_main, name=f"rank-{rank}", daemon=True,
                              args=(group, rank, port, job, _path(scratch, rank), start,
                                    os.getpid()))
        for rank in range(group.ranks)
    }
    try:
        for process in processes.values():
            process.start()
        _watch(group, processes, scratch)
    finally:
        for process in processes.values():
            _kill(process)
    return [_result(scratch, rank) for rank in range(group.ranks)]


def _watch(group: Group, processes: Mapping[int, Any], scratch: Path) -> None:
    started = time.monotonic()
    deadline = started + group.limit_s
    running = dict(processes)
    errors: dict[int, str] = {}
    while running:
        left = deadline - time.monotonic()
        if errors:
            left = min(left, GRACE_S)
        ended = wait([p.sentinel for p in running.values()], timeout=max(left, 0.0))
        if not ended:
            # the time waited: the limit, or less where a peer's error cut it to its grace
            raise RanksHung(sorted(running), group.ranks, time.monotonic() - started, errors)
        for rank, process in list(running.items()):
            if process.sentinel not in ended:
                continue
            process.join()
            del running[rank]
            if process.exitcode != 0 or not _path(scratch, rank).exists():
                raise RankDied(rank, group.ranks, _how(process.exitcode))
            error = _error_of(_result(scratch, rank))
            if error is not None:
                errors[rank] = error
    if errors:
        rank = min(errors)
        raise RankRaised(rank, errors[rank], _result(scratch, rank).get("unsupported", False))


def _how(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        return signal.Signals(-exitcode).name
    return f"exit status {exitcode}" if exitcode else "exit status 0 without a result"


def _error_of(result: Any) -> str | None:
    return result.get("error") if isinstance(result, dict) else None


def _kill(process: Any) -> None:
    if process.pid is not None and process.exitcode is None:
        try:
            os.kill(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.join()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _path(scratch: Path, rank: int) -> Path:
    return scratch / f"rank-{rank}.bin"


def _result(scratch: Path, rank: int) -> Any:
    from kit.execution import load_evidence

    return load_evidence(_path(scratch, rank))


# -- inside a rank ---------------------------------------------------------------------------


def _rank_main(group: Group, rank: int, port: int, job: RankJob, result_path: Path,
               start: RankStart, worker: int) -> None:
    """A rank's life: the device enabled where it came from the fork server, join the group,
    run the job, leave the result (or the error) behind."""
    import torch
    import torch.distributed as dist

    from kit.execution import save_evidence
    from kit.outcomes import classify_exception, failure_message

    die_with_parent()  # the worker, or the fork server, which dies with the worker
    if start.worker_died(worker):
        os._exit(1)
    torch.set_num_threads(1)  # the ranks share the worker's cores
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    try:
        start.enable_device()
        dist.init_process_group(group.backend, rank=rank, world_size=group.ranks,
                                timeout=dt.timedelta(seconds=group.group_timeout_s))
        result: Any = {"outputs": job(rank)}
    except Exception as exc:  # noqa: BLE001 - any error is the rank's result, told to the kit
        traceback.print_exc()
        result = {"error": failure_message(exc),
                  "unsupported": classify_exception(exc) is Status.UNSUPPORTED}
    save_evidence(result_path, result)
