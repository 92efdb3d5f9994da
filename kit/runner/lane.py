"""The judge-ahead lane: one slot's tests, its worker running ahead of its judge.

After a pass, each test the worker executes goes to the judge at once, queued behind those it
holds (at most ``JUDGED_SLOTS`` tests and ``JUDGE_HELD_BYTES`` of evidence), and the worker
goes on to the next: neither waits for the other while the queue has room. Verdicts are
recorded in order as they come. A failure voids every test run after it (they ran on a device
not yet probed): their verdicts are dropped and they run again after the probe, as a run
waiting for each verdict would have run them. After a failure the next test is judged alone
before the worker runs ahead again: a broken kernel fails test after test, and each failure
would void those behind it.
"""

from __future__ import annotations

import collections
import queue
from collections.abc import Callable

from kit.results import TestRecord
from kit.rundir import JUDGED_SLOTS
from kit.runner.aftercare import Aftercare, AfterTest, is_fatal
from kit.runner.inputs import Deadlines
from kit.runner.slot_roles import Judges, Worker

#: The most evidence a worker's judge holds at once, in bytes, past its oldest test: a scale
#: test leaves hundreds of MiB, and the run directory's disk holds them all until judged.
JUDGE_HELD_BYTES = 1 << 30


class Lane:
    """One slot's state as its tests go: its worker, the tests its judge holds, the tests to
    run again."""

    def __init__(
        self,
        worker: Worker,
        judges: Judges,
        care: Aftercare,
        *,
        deadlines: Deadlines,
        annotate: Callable[[TestRecord], TestRecord],
        stopped: Callable[[], bool],
    ) -> None:
        #: The slot's current worker (aftercare replaces it).
        self.worker = worker
        self._judges = judges
        self._care = care
        self._deadlines = deadlines
        self._annotate = annotate
        #: Whether the run is stopping (another slot failed): the lane ends at its next test.
        self._stopped = stopped
        #: The tests the judge holds, oldest first, with the size of their evidence.
        self.judged: collections.deque[tuple[TestRecord, int]] = collections.deque()
        #: Tests to run (again) before any pending one, in order.
        self.again: collections.deque[str] = collections.deque()
        #: Whether the last verdict recorded passed: only then does the worker run ahead.
        self.passed = True

    @property
    def held_bytes(self) -> int:
        return sum(size for _, size in self.judged)

    def run(self, pending: queue.SimpleQueue[str]) -> None:
        """Run and judge tests from ``pending`` (shared with the other slots) until none is
        left; the lane's last worker is stopped."""
        try:
            while not self._stopped():
                test_id = self.again.popleft() if self.again else _next(pending)
                if test_id is None:
                    if not self.judged:
                        return
                    self._settle_oldest()  # a failure sends tests back to run
                    continue
                self._step(test_id)
        finally:
            self.worker.stop()  # the slot's current worker (restarts replaced the first)

    def _step(self, test_id: str) -> None:
        """Execute ``test_id``, then queue it for the judge or settle it at once."""
        self._care.progress.start(test_id)
        executed = self.worker.run(test_id, self._deadlines.vendor(test_id))
        if not self._settle_held(test_id, wait=False):
            return  # a verdict that came meanwhile failed: ``test_id`` runs again
        judges = self._judges
        if (self.passed and judges.needs_judging(executed) and self.worker.alive
                and judges.accepting):
            self._queue(executed)
        elif self._settle_held(test_id, wait=True):
            verdict = judges.verdict(self.worker, executed, self._deadlines.judge(test_id))
            self._conclude(self._annotate(verdict), fatal=is_fatal(executed))

    def _queue(self, executed: TestRecord) -> None:
        """Hand ``executed`` to the judge once its queue has room (waiting for the oldest
        verdicts, which may void ``executed``: it then runs again)."""
        size = self.worker.evidence_bytes()
        while self.judged and (len(self.judged) >= JUDGED_SLOTS
                               or self.held_bytes + size > JUDGE_HELD_BYTES):
            if not self._settle_oldest(executed.id):
                return
        self._judges.begin(executed, self.worker)
        self.judged.append((executed, size))

    def _settle_held(self, running: str, *, wait: bool) -> bool:
        """Record, in order, the verdicts the judge owes: every one (``wait``), or those it has
        given already. False where one failed (``running`` then runs again)."""
        while self.judged and (wait or self._judges.answered):
            if not self._settle_oldest(running):
                return False
        return True

    def _settle_oldest(self, running: str | None = None) -> bool:
        """Record the verdict on the oldest test the judge holds; True if it passed.

        A failure voids the tests run after it: the judge's verdicts on those it holds are
        dropped, and they, then ``running`` (executed, not handed over), run again first."""
        executed, _ = self.judged.popleft()
        record = self._annotate(self._judges.finish(executed, self._deadlines.judge(executed.id)))
        if record.status.is_failure:
            void = [later.id for later, _ in self.judged]
            for later, _ in self.judged:
                self._judges.drop(later, self._deadlines.judge(later.id))
            self.judged.clear()
            self.again.extendleft(reversed([*void, *([running] if running else [])]))
            self._conclude(record)
            return False
        # Passed: the worker goes on as it is (a later test that killed it is replaced when
        # that test is recorded).
        self.worker = self._care.record(AfterTest(self.worker, record))
        self.passed = True
        return True

    def _conclude(self, record: TestRecord, *, fatal: bool = False) -> None:
        after = self._care.conclude(self.worker, self._judges, record, fatal=fatal)
        self.worker = after.worker
        self.passed = not after.record.status.is_failure


def _next(pending: queue.SimpleQueue[str]) -> str | None:
    try:
        return pending.get_nowait()
    except queue.Empty:
        return None
