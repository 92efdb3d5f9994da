"""A judge holds up to two tests, answering in order; one that dies holding them answers each
as the kit's ERROR, never with another test's verdict, and is replaced only once it holds none.

Real judge processes; the "worker" here only hands over evidence paths (of no file: a live
judge's verdict on them is "no evidence from the worker").
"""

from __future__ import annotations

import itertools
import os
import signal
from pathlib import Path

import pytest

from kit.results import Status, TestRecord
from kit.runner.judge_slot import JudgeSlot
from kit.runner.pool import WorkerProcess

pytestmark = pytest.mark.slow(seconds=20)

FIRST, SECOND, THIRD = (TestRecord(f"unit/opinfo/add/float32/{n}", Status.PASS, 0.1)
                        for n in range(3))


class HandsOverNothing:
    """Stands for the worker: its evidence slots name files that are not there."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def hand_over_evidence(self, slot: int) -> Path:
        return self.directory / f"no-evidence-{slot}.bin"


def test_a_judge_dead_with_two_tests_queued_fails_each_and_is_then_replaced(
    tmp_path: Path,
) -> None:
    slot = JudgeSlot(tmp_path / "workers", itertools.count(1), {}, tiers=("unit",))
    worker: WorkerProcess = HandsOverNothing(tmp_path)  # type: ignore[assignment]
    try:
        slot.start()
        judge = slot._judge
        assert judge is not None
        judge.wait_ready()
        os.killpg(judge.process.pid, signal.SIGKILL)  # as the OOM killer would
        judge.process.wait()
        slot.begin(FIRST, worker)
        slot.begin(SECOND, worker)
        first, second = slot.finish(FIRST, 30), slot.finish(SECOND, 30)
        assert (first.id, second.id) == (FIRST.id, SECOND.id)
        for record in (first, second):
            assert record.status is Status.ERROR
            assert record.message.startswith("the kit's judge failed on this test")
        slot.begin(THIRD, worker)  # a fresh judge: its own verdict on the third test
        third = slot.finish(THIRD, 60)
        assert (third.id, third.status) == (THIRD.id, Status.ERROR)
        assert "no evidence from the worker" in third.message
    finally:
        slot.stop()


def test_a_live_judge_answers_two_queued_tests_in_order(tmp_path: Path) -> None:
    slot = JudgeSlot(tmp_path / "workers", itertools.count(1), {}, tiers=("unit",))
    worker: WorkerProcess = HandsOverNothing(tmp_path)  # type: ignore[assignment]
    try:
        slot.begin(FIRST, worker)
        slot.begin(SECOND, worker)
        answers = [slot.finish(FIRST, 60), slot.finish(SECOND, 60)]
        assert [a.id for a in answers] == [FIRST.id, SECOND.id]
        assert all("no evidence from the worker" in a.message for a in answers)
    finally:
        slot.stop()
