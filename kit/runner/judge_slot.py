"""A slot's judge: started on first use (or early, beside the first worker), handed the tests
its worker executed in order, replaced when it fails; and what a test the judge never sees ends
as."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from kit.results import WORKER_DETAILS, Status, TestRecord
from kit.rundir import JUDGED_SLOTS
from kit.runner.judge import judged_apart
from kit.runner.pool import JudgeProcess
from kit.runner.slot_roles import Worker


class JudgeSlot:
    """One worker thread's judge: started on first use, replaced when it fails."""

    def __init__(
        self,
        log_dir: Path,
        numbers: Iterator[int],
        env: dict[str, str],
        golden: Path | None = None,
        tiers: tuple[str, ...] = (),
    ) -> None:
        self._log_dir = log_dir
        self._numbers = numbers
        self._env = env
        #: The run's output directory when the judges keep golden artifacts.
        self._golden = golden
        #: The run's tiers: a judge warms them up before its first verdict.
        self._tiers = tiers
        self._judge: JudgeProcess | None = None
        #: Tests handed to judges so far: the evidence slot goes round with it.
        self._handed = 0

    def start(self) -> None:
        """Start this slot's judge now, without waiting for it: it gets ready while the
        worker starts (a judge that fails to start is found, and replaced, at first use)."""
        if self._judge is None:
            self._judge = JudgeProcess(self._log_dir, next(self._numbers), self._env,
                                       self._golden, self._tiers)

    def verdict(self, worker: Worker, executed: TestRecord, timeout: float) -> TestRecord:
        """The final record of a test the worker executed.

        An execution that ended PASS is judged here, apart from the vendor's process; any
        other ending stands as the worker reported it, except a skip or not-applicable, which
        only the kit may decide (it did, before dispatch).
        """
        if self.needs_judging(executed):
            self.begin(executed, worker)
            return self.finish(executed, timeout)
        return settled_by_worker(executed)

    @staticmethod
    def needs_judging(executed: TestRecord) -> bool:
        return executed.status is Status.PASS and judged_apart(executed.id)

    def begin(self, executed: TestRecord, worker: Worker) -> None:
        """Hand the judge the test ``worker`` executed last, behind any it holds (fewer than
        ``JUDGED_SLOTS``); ``finish`` waits for the verdicts in the order begun. Its evidence
        goes to the next slot in turn: the others may hold the tests queued before it."""
        self.start()
        assert self._judge is not None
        assert self._judge.holding < JUDGED_SLOTS
        self._handed += 1
        self._judge.submit(executed, worker.hand_over_evidence(self._handed % JUDGED_SLOTS))

    def finish(self, executed: TestRecord, timeout: float) -> TestRecord:
        assert self._judge is not None
        record = self._judge.collect(executed, timeout)
        if not self._judge.alive and not self._judge.holding:
            # Replaced at the next ``begin``; a dead judge still holding a queued test answers
            # its ``finish`` first (the kit's ERROR), so no verdict is taken for another test.
            self._judge = None
        return with_worker_details(record, executed)

    @property
    def answered(self) -> bool:
        """Whether ``finish`` would answer the oldest test held at once."""
        return self._judge is not None and self._judge.answered

    @property
    def accepting(self) -> bool:
        """Whether a test may be queued now: the slot's judge is alive, or none is started."""
        return self._judge is None or self._judge.alive

    def drop(self, executed: TestRecord, timeout: float) -> None:
        """Wait for and discard the verdict on ``executed`` (begun, its execution void): the
        judge answers in order, so the next test's verdict must not be taken for it. A dead
        judge still holding it answers the kit's ERROR, discarded too; one already replaced
        (it died holding nothing) has nothing to wait for."""
        if self._judge is not None:
            self.finish(executed, timeout)

    def stop(self) -> None:
        if self._judge is not None:
            self._judge.stop()
            self._judge = None


def settled_by_worker(executed: TestRecord) -> TestRecord:
    """The record of a test the judge does not see: as the worker ended it, except a skip or
    not-applicable, which only the kit may decide (it did, before dispatch)."""
    if executed.status in (Status.SKIPPED, Status.NOT_APPLICABLE):
        return replace(
            executed,
            status=Status.ERROR,
            message=f"the vendor's code ended the test as {executed.status.value} "
            f"({executed.message}): only the kit decides what does not apply",
        )
    return executed


def with_worker_details(judged: TestRecord, executed: TestRecord) -> TestRecord:
    """The judged record, with what only the worker saw of the call (``WORKER_DETAILS``)."""
    kept = {key: executed.details[key] for key in WORKER_DETAILS if key in executed.details}
    return replace(judged, details={**judged.details, **kept}) if kept else judged
