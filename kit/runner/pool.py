"""Worker processes as seen from the orchestrator: start, send a test, wait, kill."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit.errors import DeviceError
from kit.outfiles import make_real_dir, open_for_append
from kit.results import Status, TestRecord
from kit.runner.probe import ProbeFinding, ProbeReport
from kit.runner.protocol import ChannelClosed, ChannelTimeout, LineReader, Message, send

#: Collection imports torch and the tier suites; generous, because a loaded machine is slow.
STARTUP_TIMEOUT_S = 600.0
PROBE_TIMEOUT_S = 60.0


class WorkerStartError(DeviceError):
    """A worker could not start: usually the vendor stack failing at import or collection."""


@dataclass(frozen=True)
class WorkerSpec:
    """How to start a worker; identical for every restart."""

    vendor: str
    today: str
    paths: tuple[str, ...]
    log_dir: Path
    env: dict[str, str]
    #: The vendor's claimed dtypes: the health probe checks each floating and integer one.
    dtypes: tuple[str, ...]


class WorkerProcess:
    def __init__(self, spec: WorkerSpec, number: int) -> None:
        self.spec = spec
        self.number = number
        self.log_path = spec.log_dir / f"worker-{number}.log"
        cmd_read, self._cmd_write = os.pipe()
        self._res_read, res_write = os.pipe()
        make_real_dir(spec.log_dir)  # inside --out: never through a link
        with os.fdopen(open_for_append(self.log_path), "ab") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable, "-m", "kit.runner.worker",
                    f"--vendor={spec.vendor}", f"--today={spec.today}",
                    f"--commands={cmd_read}", f"--results={res_write}",
                    f"--dtypes={','.join(spec.dtypes)}",
                    *spec.paths,
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                pass_fds=(cmd_read, res_write),
                env={**os.environ, **spec.env},
                start_new_session=True,  # its own process group: a kill takes its children too
            )
        os.close(cmd_read)
        os.close(res_write)
        self.reader = LineReader(self._res_read)
        self.ready: Message = {}

    def wait_ready(self) -> Message:
        try:
            message = self.reader.receive(STARTUP_TIMEOUT_S)
        except (ChannelClosed, ChannelTimeout):
            self.kill()
            raise WorkerStartError(
                f"worker did not start (exit code {self.process.poll()}); see {self.log_path}"
            ) from None
        if message.get("type") != "ready":
            self.kill()
            raise WorkerStartError(f"worker sent {message.get('type')!r} before 'ready'")
        self.ready = message
        return message

    def run(self, test_id: str, timeout: float) -> TestRecord:
        """Run one test; a dead or silent worker yields CRASH/TIMEOUT (the caller restarts it)."""
        try:
            send(self._cmd_write, {"type": "run", "id": test_id})
            reply = self.reader.receive(timeout)
        except ChannelTimeout:
            self.kill()
            return TestRecord(
                test_id, Status.TIMEOUT, timeout,
                f"no result within {timeout:g} s; worker killed", {"timeout_s": timeout},
            )
        except (ChannelClosed, BrokenPipeError):
            return self._crash_record(test_id)
        return TestRecord.from_json(reply["record"])

    def probe(self, suspects: list[str]) -> ProbeReport:
        """Ask for a health probe that leaves out the ops ``suspects`` implicate.

        The worker names each check before running it, so a probe that kills or hangs the
        worker is blamed on that check (a dead or hung worker is killed and must be replaced).
        """
        current: tuple[str, str] | None = None
        deadline = time.monotonic() + PROBE_TIMEOUT_S
        try:
            send(self._cmd_write, {"type": "probe", "suspects": suspects})
            while True:
                reply = self.reader.receive(max(0.0, deadline - time.monotonic()))
                if reply.get("type") == "probe_check":
                    current = (str(reply.get("op")), str(reply.get("dtype")))
                    continue
                return ProbeReport.from_json(reply)
        except ChannelTimeout:
            self.kill()
            problem = f"hung: no answer within {PROBE_TIMEOUT_S:g} s"
        except (ChannelClosed, BrokenPipeError):
            self.kill()
            problem = "the worker died"
        op, dtype = current or ("probe", "-")
        return ProbeReport((ProbeFinding(op, dtype, problem, fatal=True),))

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def _crash_record(self, test_id: str) -> TestRecord:
        code = self.process.wait()
        details: dict[str, Any] = {"exit_code": code}
        if code < 0:
            name = signal.Signals(-code).name
            details["signal"] = name
            message = f"worker process died with {name} while running this test"
        else:
            message = f"worker process exited with code {code} while running this test"
        self.close()
        return TestRecord(test_id, Status.CRASH, 0.0, message, details)

    def kill(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait()
        self.close()

    def stop(self) -> None:
        """Ask politely, then kill."""
        try:
            send(self._cmd_write, {"type": "exit"})
            self.process.wait(timeout=10)
        except (BrokenPipeError, OSError, subprocess.TimeoutExpired):
            pass
        self.kill()

    def close(self) -> None:
        for fd in (self._cmd_write, self._res_read):
            try:
                os.close(fd)
            except OSError:
                pass
        self._cmd_write = self._res_read = -1
