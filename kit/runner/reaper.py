"""Every process a run started has ended before its report is written.

Workers run in sessions of their own and are killed by process group, but vendor code can leave
both: a ``setsid`` grandchild, orphaned, would be re-parented to init and outlive the run, free
to rewrite a shard's directory after its report (issue 24's probe). So the run's process makes
itself a child subreaper (Linux ``PR_SET_CHILD_SUBREAPER``): an orphan of any of its descendants
becomes its child instead of init's. Before the report it kills every descendant that was not
already there when the run began (a process is named by its pid and start time, so a reused pid
is not mistaken for it), until none is left.

Where the kernel has no subreaper (not Linux), a run still kills its workers' process groups;
only an orphan that left them can then outlive it.
"""

from __future__ import annotations

import ctypes
import os
import signal
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37
_PROC = Path("/proc")
#: Rounds of kill-and-look: each may uncover the orphans of those just killed.
_ROUNDS = 100

#: A process: its pid and its start time (clock ticks after boot), unique together.
Process = tuple[int, int]


def _set_subreaper(on: bool) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def is_subreaper() -> bool:
    """Whether this process is a child subreaper now (inside ``run_reaper``, on Linux)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        flag = ctypes.c_int(0)
        done = libc.prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0)
    except (OSError, AttributeError):
        return False
    return int(done) == 0 and flag.value != 0


def parent_of(pid: int) -> int | None:
    """The parent pid of process ``pid``; None when it has gone."""
    stat = _stat(_PROC / str(pid))
    return None if stat is None else stat[0]


def _stat(pid_dir: Path) -> tuple[int, int] | None:
    """(parent pid, start time) of one /proc entry; None when it has gone."""
    try:
        text = (pid_dir / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) ": state is field 3
    return int(fields[1]), int(fields[19])


def _table() -> Mapping[Process, int]:
    """Every process of the machine, to its parent's pid."""
    table: dict[Process, int] = {}
    for entry in _PROC.iterdir() if _PROC.is_dir() else ():
        if entry.name.isdigit() and (stat := _stat(entry)) is not None:
            table[(int(entry.name), stat[1])] = stat[0]
    return table


def descendants(root: int) -> set[Process]:
    """The processes below ``root`` now."""
    table = _table()
    children: dict[int, list[Process]] = {}
    for process, parent in table.items():
        children.setdefault(parent, []).append(process)
    found: set[Process] = set()
    stack = [root]
    while stack:
        for process in children.get(stack.pop(), []):
            if process not in found:
                found.add(process)
                stack.append(process[0])
    return found


def _parent(process: Process) -> int | None:
    stat = _stat(_PROC / str(process[0]))
    return None if stat is None or stat[1] != process[1] else stat[0]


def end_new_descendants(before: set[Process]) -> int:
    """Kill every descendant of this process not in ``before``; how many were killed.

    Only this process's own children are waited for (an orphan killed becomes one): a child
    some other code of this process started before the run is never reaped from under it.
    """
    killed: set[Process] = set()
    for _ in range(_ROUNDS):
        left = descendants(os.getpid()) - before
        if not left:
            break
        mine = [p for p in left if _parent(p) == os.getpid()]
        for pid, _start in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        killed |= left
        for pid, _start in mine:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
    return len(killed)


@contextmanager
def run_reaper() -> Iterator[None]:
    """Within: orphans of the run's processes stay this process's; on leaving, every process
    started within has ended (killed if need be)."""
    before = descendants(os.getpid())
    subreaper = _set_subreaper(True)
    try:
        yield
    finally:
        end_new_descendants(before)
        if subreaper:
            _set_subreaper(False)


def die_with_parent() -> None:
    """Linux: get SIGKILL when the parent dies (a worker or fork server, when the orchestrator
    does), so no orphan keeps a hung kernel alive."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
    except OSError:
        pass
