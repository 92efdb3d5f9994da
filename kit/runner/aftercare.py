"""What follows a verdict before its record is journaled: the worker's fate and the device's.

A dead worker is replaced; one a fatal device error may have poisoned retires unprobed; after
any other failure the device is probed, and a numeric or semantic failure whose probe fails is
judged again on the fresh worker (``details.rejudged``), unless the breaker says the op fails
there anyway. Only the worker decision changes here, never a record's status.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace

from kit.results import Status, TestRecord
from kit.runner.inputs import Deadlines
from kit.runner.probe import suspect_of
from kit.runner.progress import Progress
from kit.runner.slot_roles import Judges, RecordSink, Worker

#: Endings whose worker is gone (or killed): replaced, never probed.
_RESTART_STATUSES = frozenset({Status.CRASH, Status.TIMEOUT})

#: After this many failures in a row of one op confirmed on fresh workers, its later failures
#: are no longer judged again (they are still probed: the probe tells a broken op from a broken
#: device).
BREAKER_FAILURES = 3

#: The failures a device's state can fake, judged again on a fresh worker after a failed probe.
_REJUDGED_STATUSES = frozenset({Status.FAIL_NUMERIC, Status.FAIL_SEMANTIC})

#: ``details["probe"]`` of a test whose fatal device error retired its worker unprobed.
RETIRED = "skipped: a fatal device error retires its worker; new worker"


class ProbeLedger:
    """What the run has learned about ops, shared by the worker threads.

    - ``streak``: failures in a row of each suspect op confirmed on a fresh worker (a pass
      resets it): the circuit breaker. Past ``BREAKER_FAILURES`` the op is broken for every
      input as far as the run can tell, and judging each of its failures again would only
      repeat the same answer at a worker start each. It never stops the probe: only the probe
      tells a broken op from a device a fatal error left poisoned.
    - ``failed``: suspect ops with a recorded failure; the probe leaves out the ops they
      implicate (a failure judged again and passed on a fresh worker is not one).
    - ``broken``: pool ops the probe found wrong on a fresh worker that had run no test: a broken
      kernel, not a poisoned device, so they prove nothing about device state.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._streaks: dict[str, int] = {}
        self._failed: set[str] = set()
        self._broken: set[str] = set()

    def observe(self, suspect: str | None, status: Status) -> None:
        """Learn from a recorded verdict: a pass resets ``suspect``'s streak, a failure puts it
        among the failed ops."""
        if suspect is None:
            return
        with self._lock:
            if status.is_failure:
                self._failed.add(suspect)
            else:
                self._streaks[suspect] = 0

    def refailed(self, suspect: str | None) -> None:
        """Count a failure ``suspect`` repeated on a fresh worker into its streak."""
        if suspect is not None:
            with self._lock:
                self._streaks[suspect] = self._streaks.get(suspect, 0) + 1

    def tripped(self, suspect: str | None) -> bool:
        """Whether ``suspect`` failed on fresh workers ``BREAKER_FAILURES`` times in a row."""
        with self._lock:
            return suspect is not None and self._streaks.get(suspect, 0) >= BREAKER_FAILURES

    def suspects(self, current: str | None) -> list[str]:
        """Names the probe must not rely on: ``current``, every failed op, every broken one."""
        with self._lock:
            names = self._failed | self._broken | ({current} if current else set())
        return sorted(names)

    def mark_broken(self, ops: frozenset[str]) -> frozenset[str]:
        """Record pool ops wrong on a fresh worker; returns those not known before."""
        with self._lock:
            new = ops - self._broken
            self._broken |= ops
        return new


@dataclass(frozen=True)
class AfterTest:
    """The worker to go on with, the record to journal, and why the record is in doubt.

    ``doubt`` (the failed probe's verdict) is set on a numeric or semantic failure whose probe
    found the device unhealthy: garbage the device's state left may be all that failed, so the
    test is judged again on the fresh worker before anything is recorded (``_rejudge``).
    """

    worker: Worker
    record: TestRecord
    doubt: str | None = None


def is_fatal(executed: TestRecord) -> bool:
    """Whether the vendor's process ended the test with a device error (an exception other
    than not-implemented): the device's state afterwards is unknown, so its worker retires."""
    return executed.status is Status.ERROR


def with_probe(record: TestRecord, verdict: str) -> TestRecord:
    return replace(record, details={**record.details, "probe": verdict})


class Aftercare:
    """The run's aftercare, shared by its slots' threads (each passes its own worker)."""

    def __init__(
        self,
        *,
        ledger: ProbeLedger,
        start_worker: Callable[[], Worker],
        journal: RecordSink,
        progress: Progress,
        annotate: Callable[[TestRecord], TestRecord],
        deadlines: Deadlines,
    ) -> None:
        self.ledger = ledger
        #: The run's progress line (the extra slots read its pace too).
        self.progress = progress
        #: Starts a worker for the calling thread's slot (its device, with ``--devices``).
        self._start_worker = start_worker
        self._journal = journal
        self._annotate = annotate
        self._deadlines = deadlines

    def conclude(self, worker: Worker, judges: Judges, record: TestRecord, *,
                 fatal: bool = False) -> AfterTest:
        """Record a verdict nothing run after it depends on: the worker is replaced, or probed
        after a failure, first (``after``); a failure the probe casts doubt on is judged again
        on the fresh worker (``_rejudge``) and that verdict is recorded instead."""
        after = self.after(worker, record, fatal=fatal)
        if after.doubt is not None:
            after = self._rejudge(after, judges)
        self.record(after)
        return after

    def record(self, after: AfterTest) -> Worker:
        """Journal a final record, learn from it; the worker to go on with."""
        self.ledger.observe(suspect_of(after.record.id), after.record.status)
        self._journal.append(after.record)
        self.progress.advance(after.record.status.is_failure, after.record.id)
        return after.worker

    def after(self, worker: Worker, record: TestRecord, *, fatal: bool = False,
              doubting: bool = True) -> AfterTest:
        """Replace a dead worker, retire one a fatal device error may have poisoned, probe a
        live one after any other failure (device poisoning).

        Only the worker decision changes here, never the record's status: the probe's verdict
        (or why none ran) goes into ``details["probe"]``. A numeric or semantic failure whose
        probe fails is returned in doubt (``doubting``; the breaker aside), to be judged again.
        """
        suspect = suspect_of(record.id)
        if record.status in _RESTART_STATUSES or not worker.alive:
            self.progress.note(f"{record.status.value}: {record.id}: {record.message}; new worker")
            worker.kill()
            return AfterTest(self._start_worker(), record)
        if not record.status.is_failure:
            return AfterTest(worker, record)
        if fatal:  # the device raised: nothing else runs there, not even the probe
            self.progress.note(f"device error in {record.id}; new worker")
            worker.kill()
            return AfterTest(self._start_worker(), with_probe(record, RETIRED))
        report = worker.probe(self.ledger.suspects(suspect))
        if report.ok:
            return AfterTest(worker, with_probe(record, report.message))
        self.progress.note(f"device unhealthy after {record.id} ({report.message}); new worker")
        fresh = self._replace(worker, suspect)
        verdict = f"unhealthy: {report.message}; new worker"
        doubt = doubting and record.status in _REJUDGED_STATUSES
        if doubt and self.ledger.tripped(suspect):
            skipped = (f"skipped: {suspect} failed on a fresh worker {BREAKER_FAILURES} times "
                       "in a row")
            details = {**record.details, "probe": verdict, "rejudged": skipped}
            return AfterTest(fresh, replace(record, details=details))
        return AfterTest(fresh, with_probe(record, verdict), verdict if doubt else None)

    def _rejudge(self, after: AfterTest, judges: Judges) -> AfterTest:
        """Judge a failure in doubt again on the fresh worker; the second verdict stands.

        A failure the same test repeats on a worker that ran nothing before it is the op's
        (it feeds the breaker); a pass there was garbage the previous worker's device state
        left. Either way the record says what happened first (``details["rejudged"]``).
        """
        first, worker = after.record, after.worker
        executed = worker.run(first.id, self._deadlines.vendor(first.id))
        again = self._annotate(judges.verdict(worker, executed,
                                              self._deadlines.judge(first.id)))
        if again.status.is_failure:
            self.ledger.refailed(suspect_of(first.id))
        assert after.doubt is not None
        said = (f"{first.status.value} ({first.message}) on a worker whose probe then failed "
                f"({after.doubt}); judged again on a fresh worker")
        again = replace(again, details={**again.details, "rejudged": said})
        return self.after(worker, again, fatal=is_fatal(executed), doubting=False)

    def _replace(self, worker: Worker, suspect: str | None) -> Worker:
        """A fresh worker, probed once more: what is wrong there too is a broken kernel.

        Poisoning is process state and a fresh worker is clean of it; a pool op still wrong on
        a worker that ran no test is broken for every input, so later probes leave it out (one
        restart per broken op instead of one per failing test). When that confirming probe
        itself raised or killed its worker, the worker is replaced once more.
        """
        worker.kill()
        fresh = self._start_worker()
        confirm = fresh.probe(self.ledger.suspects(suspect))
        if confirm.ok:
            return fresh
        new = self.ledger.mark_broken(confirm.wrong_ops)
        if new:
            self.progress.note(
                f"probe op(s) {', '.join(sorted(new))} wrong on a fresh worker too "
                f"({confirm.message}): broken kernels, not device state; later probes skip them"
            )
        if confirm.fatal or not fresh.alive:
            fresh.kill()
            fresh = self._start_worker()
        return fresh
