"""Worker processes as seen from the orchestrator: start, send a test, wait, kill."""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit.errors import DeviceError, KitCrash
from kit.outfiles import make_real_dir, open_for_append
from kit.results import Status, TestRecord
from kit.rundir import evidence_name, judge_log_name, judged_evidence_name, worker_log_name
from kit.runner.forked import ForkedChild, ForkServer
from kit.runner.isolation import isolated_command, isolated_env
from kit.runner.logtail import worker_log_details
from kit.runner.messages import (
    Exit,
    Judged,
    JudgeReady,
    JudgeTest,
    Message,
    Probe,
    ProbeCheck,
    ProbeResult,
    RunResult,
    RunTest,
    WorkerReady,
    receive_message,
    send_message,
)
from kit.runner.probe import ProbeFinding, ProbeReport
from kit.runner.protocol import ChannelClosed, ChannelTimeout, LineReader, ProtocolError

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
    #: The flows the run claims (the profile's, or ``--flows``).
    flows: tuple[str, ...] = ("eager",)
    #: The file listing the ids the run plans: the worker collects only these. None: all.
    planned_ids: Path | None = None
    #: ``--timeout``: told to the worker, whose tiers plan within each test's time.
    timeout_s: float | None = None


class ChildProcess:
    """A kit child process (worker or judge) with a command pipe and a result pipe.

    Each child runs in its own session and process group, so a kill takes its children too.
    Replies are read with a deadline; a child that exits while something else (a ``setsid``
    grandchild) still holds its result pipe is seen as closed, not as silent.
    """

    module = ""
    #: Whether the child runs in an interpreter no vendor start-up hook reaches
    #: (``kit.runner.isolation``); a worker must import the vendor, a judge must not.
    isolated = False

    def __init__(
        self, argv: list[str], log_path: Path, env: dict[str, str],
        forks: ForkServer | None = None,
    ) -> None:
        self.log_path = log_path
        cmd_read, self._cmd_write = os.pipe()
        self._res_read, res_write = os.pipe()
        make_real_dir(log_path.parent)  # inside --out: never through a link
        args = [f"--commands={cmd_read}", f"--results={res_write}", *argv]
        command = [sys.executable, "-m", self.module, *args]
        environment = {**os.environ, **env}
        if self.isolated:
            command = isolated_command(self.module, args)
            environment = isolated_env(environment)
        with os.fdopen(open_for_append(log_path), "ab") as log:
            forked = forks.spawn(argv, (cmd_read, res_write, log.fileno())) if forks else None
            self.process: subprocess.Popen[bytes] | ForkedChild = forked or subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                pass_fds=(cmd_read, res_write),
                env=environment,
                start_new_session=True,
            )
        os.close(cmd_read)
        os.close(res_write)
        self.reader = LineReader(self._res_read, alive=lambda: self.process.poll() is None)

    def send(self, message: Message) -> None:
        send_message(self._cmd_write, message)

    def receive(self, timeout: float | None) -> Message:
        return receive_message(self.reader, timeout)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """Kill the child's whole process group (its own children too)."""
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
            self.send(Exit())
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


class WorkerProcess(ChildProcess):
    module = "kit.runner.worker"

    def __init__(self, spec: WorkerSpec, number: int, forks: ForkServer | None = None) -> None:
        """``forks``: the fork server to start from (``kit.runner.forked``); None: cold."""
        self.spec = spec
        self.number = number
        #: Where this worker leaves each executed test's evidence for the judge.
        self.evidence_path = spec.log_dir / evidence_name(number)
        argv = [
            f"--vendor={spec.vendor}", f"--today={spec.today}",
            f"--dtypes={','.join(spec.dtypes)}", f"--evidence={self.evidence_path}",
            f"--flows={','.join(spec.flows)}",
            *([f"--ids={spec.planned_ids}"] if spec.planned_ids is not None else []),
            *([f"--timeout={spec.timeout_s!r}"] if spec.timeout_s is not None else []),
            *spec.paths,
        ]
        super().__init__(argv, spec.log_dir / worker_log_name(number), spec.env, forks)
        self._ready: WorkerReady | None = None

    @property
    def ready(self) -> WorkerReady:
        """What the worker announced (``wait_ready`` has returned)."""
        if self._ready is None:
            raise RuntimeError("the worker has not announced itself yet")
        return self._ready

    def wait_ready(self) -> WorkerReady:
        try:
            message = self.receive(STARTUP_TIMEOUT_S)
        except (ChannelClosed, ChannelTimeout, ProtocolError):
            self.kill()
            raise WorkerStartError(
                f"worker did not start (exit code {self.process.poll()}); see {self.log_path}"
            ) from None
        if not isinstance(message, WorkerReady):
            self.kill()
            raise WorkerStartError(f"worker sent {_kind(message)} before its ready message")
        self._ready = message
        return message

    def run(self, test_id: str, timeout: float) -> TestRecord:
        """Execute one test; a dead or silent worker yields CRASH/TIMEOUT (the caller restarts
        it), a reply that breaks the protocol an ERROR (the worker is killed)."""
        remove_stale(self.evidence_path)
        try:
            self.send(RunTest(test_id))
            reply = self.receive(timeout)
        except ChannelTimeout:
            self.kill()
            return TestRecord(
                test_id, Status.TIMEOUT, timeout,
                f"no result within {timeout:g} s; worker killed",
                {"timeout_s": timeout, **worker_log_details(self.log_path)},
            )
        except (ChannelClosed, BrokenPipeError):
            return self._crash_record(test_id)
        except ProtocolError as exc:
            self.kill()
            return TestRecord(test_id, Status.ERROR, 0.0, f"worker broke the protocol: {exc}")
        return self._result_of(test_id, reply)

    def evidence_bytes(self) -> int:
        """The size of the last test's evidence (0: it left none)."""
        try:
            return os.lstat(self.evidence_path).st_size
        except FileNotFoundError:
            return 0

    def hand_over_evidence(self, slot: int) -> Path:
        """Move the last test's evidence aside for the judge, into ``slot`` (``JUDGED_SLOTS``):
        the next test this worker runs writes its own without touching what is being judged."""
        handed = self.spec.log_dir / judged_evidence_name(self.number, slot)
        remove_stale(handed)
        try:
            os.replace(self.evidence_path, handed)
        except FileNotFoundError:
            pass  # no evidence: the judge says so, as it would have of the original path
        return handed

    def _result_of(self, test_id: str, reply: Message) -> TestRecord:
        try:
            if not isinstance(reply, RunResult) or reply.id != test_id:
                raise ValueError(f"expected the result of {test_id}, got {_kind(reply)}")
            record = reply.record
            if record.id != test_id:
                raise ValueError(f"expected the result of {test_id}, got one of {record.id}")
        except (KeyError, TypeError, ValueError) as exc:
            self.kill()
            return TestRecord(test_id, Status.ERROR, 0.0, f"worker broke the protocol: {exc}")
        return record

    def probe(self, suspects: list[str]) -> ProbeReport:
        """Ask for a health probe that leaves out the ops ``suspects`` implicate.

        The worker names each check before running it, so a probe that kills or hangs the
        worker is blamed on that check (a dead or hung worker is killed and must be replaced).
        """
        current: tuple[str, str] | None = None
        deadline = time.monotonic() + PROBE_TIMEOUT_S
        try:
            self.send(Probe(tuple(suspects)))
            while True:
                reply = self.receive(max(0.0, deadline - time.monotonic()))
                if isinstance(reply, ProbeCheck):
                    current = (reply.op, reply.dtype)
                    continue
                if not isinstance(reply, ProbeResult):
                    raise ProtocolError(f"expected a probe report, got {_kind(reply)}")
                return reply.report
        except ChannelTimeout:
            self.kill()
            problem = f"hung: no answer within {PROBE_TIMEOUT_S:g} s"
        except (ChannelClosed, BrokenPipeError, ProtocolError):
            self.kill()
            problem = "the worker died or broke the protocol"
        op, dtype = current or ("probe", "-")
        return ProbeReport((ProbeFinding(op, dtype, problem, fatal=True),))

    def _crash_record(self, test_id: str) -> TestRecord:
        code = self.process.wait()
        details: dict[str, Any] = {"exit_code": code, **worker_log_details(self.log_path)}
        if code < 0:
            name = signal.Signals(-code).name
            details["signal"] = name
            message = f"worker process died with {name} while running this test"
        else:
            message = f"worker process exited with code {code} while running this test"
        self.close()
        return TestRecord(test_id, Status.CRASH, 0.0, message, details)


class JudgeProcess(ChildProcess):
    """A judge (``kit.runner.judge``): started without the vendor, in an interpreter none of
    the vendor's start-up hooks reach, so none of its code runs."""

    module = "kit.runner.judge"
    isolated = True

    def __init__(
        self,
        log_dir: Path,
        number: int,
        env: dict[str, str],
        golden: Path | None = None,
        tiers: tuple[str, ...] = (),
    ) -> None:
        argv = [f"--tiers={','.join(tiers)}"] + ([] if golden is None else [f"--golden={golden}"])
        super().__init__(argv, log_dir / judge_log_name(number), env)
        self._ready = False
        #: Per submitted test not yet collected, in order: why it never reached the judge
        #: (None: it did). A judge holds at most ``JUDGED_SLOTS``: the one it judges, the rest
        #: queued.
        self._submitted: collections.deque[OSError | None] = collections.deque()

    def wait_ready(self) -> None:
        """Wait for the judge's ready message (once): started early, a judge loads torch and
        the kit while the first worker starts and runs its first test."""
        if self._ready:
            return
        try:
            ready = self.receive(STARTUP_TIMEOUT_S)
        except (ChannelClosed, ChannelTimeout, ProtocolError):
            self.kill()
            raise KitCrash(f"the kit's judge did not start; see {self.log_path}") from None
        if not isinstance(ready, JudgeReady):
            self.kill()
            raise KitCrash(f"the kit's judge sent {_kind(ready)} before its ready message")
        self._ready = True

    @property
    def holding(self) -> int:
        """Tests submitted whose verdicts are not collected yet."""
        return len(self._submitted)

    @property
    def answered(self) -> bool:
        """Whether ``collect`` would answer at once: the earliest held test never reached the
        judge, or the judge has replied (or died)."""
        if not self._submitted:
            return False
        return self._submitted[0] is not None or self.reader.answered()

    def submit(self, record: TestRecord, evidence: Path) -> None:
        """Hand the judge a test without waiting for its verdict (``collect`` waits): the
        worker runs the next test meanwhile. Tests submitted before are judged first."""
        self.wait_ready()  # a judge that cannot start is the kit's crash, not a verdict
        try:
            self.send(JudgeTest(record.id, str(evidence), record.duration_s))
        except OSError as exc:  # a broken pipe too: told as the verdict's ERROR by collect
            self._submitted.append(exc)
        else:
            self._submitted.append(None)

    def collect(self, record: TestRecord, timeout: float) -> TestRecord:
        """The verdict on the earliest test submitted and not yet collected (``record``); a
        judge that fails is the kit's ERROR, not the vendor's failure (the caller replaces a
        dead judge)."""
        try:
            unsent = self._submitted.popleft() if self._submitted else None
            if unsent is not None:
                raise unsent
            reply = self.receive(timeout)
            if not isinstance(reply, Judged) or reply.id != record.id:
                raise ProtocolError(f"expected the verdict on {record.id}, got {_kind(reply)}")
            verdict = reply.record
        except (ChannelClosed, ChannelTimeout, OSError, ProtocolError, KeyError) as exc:
            self.kill()
            why = type(exc).__name__ if not str(exc) else str(exc)
            return TestRecord(
                record.id, Status.ERROR, record.duration_s,
                f"the kit's judge failed on this test ({why}); see {self.log_path}",
            )
        return verdict


def remove_stale(path: Path) -> None:
    """No evidence of an earlier test may be judged as this one's."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def _kind(message: Message) -> str:
    return f"a {message.kind!r} message"
