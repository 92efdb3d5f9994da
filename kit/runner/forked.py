"""The orchestrator's side of the fork server (``kit.runner.fork_server``): workers forked
from a process that has imported what they import, told apart from cold-started ones by
nothing but their start-up time.

A server serves one worker environment (a slot with devices of its own has another), and
only where the run's process is a child subreaper (``kit.runner.reaper``: Linux, inside a
run), since a forked worker must be the orchestrator's child. Whatever goes wrong with the
server (it cannot start, dies, answers nonsense) costs nothing but the time it saves: the
worker is then started cold, as ``CKIT_FORK_SERVER=0`` starts every worker.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from kit.outfiles import open_for_append
from kit.rundir import fork_server_log_name
from kit.runner.fork_server import SERVE_OPTION
from kit.runner.reaper import is_subreaper, parent_of

#: ``CKIT_FORK_SERVER=0``: start every worker cold (a fresh interpreter each).
SWITCH_VARIABLE = "CKIT_FORK_SERVER"
#: Importing torch, OpInfo's database and transformers on a loaded machine.
SERVER_START_TIMEOUT_S = 600.0
#: Two forks and a pipe.
FORK_TIMEOUT_S = 60.0


def enabled() -> bool:
    return os.environ.get(SWITCH_VARIABLE, "1") != "0" and is_subreaper()


class ForkedChild:
    """A forked worker, as much of ``subprocess.Popen`` as the orchestrator uses."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped already (the run's reaper): killed
                self.returncode = -signal.SIGKILL
            else:
                if pid == self.pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (code := self.poll()) is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout or 0.0)
            time.sleep(0.005)
        return code


class ForkServer:
    """One server process; ``spawn`` forks a worker from it, or says it cannot (None)."""

    def __init__(self, env: dict[str, str], log_path: Path, tiers: tuple[str, ...]) -> None:
        self._lock = threading.Lock()
        self._socket, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._ready = False
        self._broken = False
        command = [sys.executable, "-m", "kit.runner.worker",
                   f"{SERVE_OPTION}={theirs.fileno()}", f"--tiers={','.join(tiers)}"]
        with os.fdopen(open_for_append(log_path), "ab") as log:
            self.process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                pass_fds=(theirs.fileno(),), env=env, start_new_session=True,
            )
        theirs.close()

    def spawn(self, argv: list[str], fds: tuple[int, int, int]) -> ForkedChild | None:
        """A worker running ``kit.runner.worker`` with ``argv`` after its pipe arguments,
        given the command pipe, result pipe and log ``fds``; None if the server cannot."""
        with self._lock:
            if self._broken:
                return None
            try:
                return self._spawn(argv, fds)
            except (OSError, ValueError, KeyError, TypeError, TimeoutError):
                self._broken = True
                self._end()
                return None

    def _spawn(self, argv: list[str], fds: tuple[int, int, int]) -> ForkedChild:
        if not self._ready:
            self._socket.settimeout(SERVER_START_TIMEOUT_S)
            if not json.loads(self._socket.recv(256) or b"{}").get("ready"):
                raise ValueError("the fork server did not start")
            self._ready = True
        self._socket.settimeout(FORK_TIMEOUT_S)
        socket.send_fds(self._socket, [json.dumps({"argv": argv}).encode()], list(fds))
        reply = json.loads(self._socket.recv(4096) or b"{}")
        pid = reply.get("pid")
        if not isinstance(pid, int) or pid <= 0:
            raise ValueError(str(reply.get("error", "the fork server gave no pid")))
        child = ForkedChild(pid)
        if parent_of(pid) != os.getpid():  # not re-parented here: neither waitable nor ours to keep
            _kill_group(pid)
            raise ValueError(f"forked worker {pid} is not this process's child")
        return child

    def close(self) -> None:
        with self._lock:
            self._end()

    def _end(self) -> None:
        self._socket.close()
        _kill_group(self.process.pid)
        self.process.wait()


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class ForkServers:
    """The run's servers, one per worker environment, each started at its first worker."""

    def __init__(self, log_dir: Path, tiers: tuple[str, ...]) -> None:
        self._log_dir = log_dir
        self._tiers = tiers
        self._servers: dict[tuple[tuple[str, str], ...], ForkServer] = {}
        self._lock = threading.Lock()
        self._closed = False

    def server_for(self, env: dict[str, str]) -> ForkServer | None:
        """The server of the environment ``env`` (the worker's, in full); None where workers
        start cold."""
        if not enabled():
            return None
        full = {**os.environ, **env}  # what a cold worker's Popen is given
        key = tuple(sorted(full.items()))
        with self._lock:
            if self._closed:
                return None
            if key not in self._servers:
                log = self._log_dir / fork_server_log_name(len(self._servers) + 1)
                self._servers[key] = ForkServer(full, log, self._tiers)
            return self._servers[key]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for server in self._servers.values():
                server.close()
            self._servers.clear()
