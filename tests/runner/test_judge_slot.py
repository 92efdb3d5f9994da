"""The judge slot over a fake judge process (``JudgeProcess`` patched): verdicts in the order
begun, evidence slots in turn, a dead judge replaced only once it holds nothing, and what the
worker alone settles. The real processes: ``test_judge_queue.py``."""

from __future__ import annotations

import collections
import itertools
from pathlib import Path

import pytest

from kit.results import DISPATCH_KEY, Status, TestRecord
from kit.rundir import JUDGED_SLOTS
from kit.runner import judge_slot
from kit.runner.judge_slot import JudgeSlot, settled_by_worker

TESTS = [TestRecord(f"unit/opinfo/add/float32/{n}", Status.PASS, 0.1) for n in range(6)]


class FakeJudgeProcess:
    """Answers PASS in order; ``die`` makes it answer ERROR for what it holds, as a dead one."""

    started: list[FakeJudgeProcess] = []

    def __init__(self, *args: object) -> None:
        self.submitted: collections.deque[tuple[TestRecord, Path]] = collections.deque()
        self.alive = True
        self.stopped = False
        FakeJudgeProcess.started.append(self)

    @property
    def holding(self) -> int:
        return len(self.submitted)

    @property
    def answered(self) -> bool:
        return bool(self.submitted)

    def submit(self, record: TestRecord, evidence: Path) -> None:
        self.submitted.append((record, evidence))

    def collect(self, record: TestRecord, timeout: float) -> TestRecord:
        held, _ = self.submitted.popleft()
        assert held.id == record.id
        status = Status.PASS if self.alive else Status.ERROR
        return TestRecord(record.id, status, record.duration_s, "judged")

    def stop(self) -> None:
        self.stopped = True


class Evidence:
    """Stands for the worker: names the slot each test's evidence went to."""

    def __init__(self) -> None:
        self.slots: list[int] = []

    def hand_over_evidence(self, slot: int) -> Path:
        self.slots.append(slot)
        return Path(f"evidence-1-judged-{slot}.bin")


@pytest.fixture
def slot(monkeypatch: pytest.MonkeyPatch) -> JudgeSlot:
    FakeJudgeProcess.started = []
    monkeypatch.setattr(judge_slot, "JudgeProcess", FakeJudgeProcess)
    return JudgeSlot(Path("workers"), itertools.count(1), {}, tiers=("unit",))


def test_verdicts_come_in_the_order_begun_and_evidence_goes_round_the_slots(
    slot: JudgeSlot,
) -> None:
    worker = Evidence()
    for executed in TESTS[:JUDGED_SLOTS]:
        slot.begin(executed, worker)  # type: ignore[arg-type]
    assert slot.answered
    assert [slot.finish(t, 1).id for t in TESTS[:JUDGED_SLOTS]] == [
        t.id for t in TESTS[:JUDGED_SLOTS]]
    assert worker.slots == [n % JUDGED_SLOTS for n in range(1, JUDGED_SLOTS + 1)]
    assert len(FakeJudgeProcess.started) == 1


def test_a_dead_judge_answers_what_it_holds_then_is_replaced(slot: JudgeSlot) -> None:
    worker = Evidence()
    slot.begin(TESTS[0], worker)  # type: ignore[arg-type]
    slot.begin(TESTS[1], worker)  # type: ignore[arg-type]
    FakeJudgeProcess.started[0].alive = False
    assert slot.accepting is False  # nothing more is queued behind a dead judge
    assert slot.finish(TESTS[0], 1).status is Status.ERROR
    assert len(FakeJudgeProcess.started) == 1  # still holds a test: not replaced yet
    slot.drop(TESTS[1], 1)
    assert slot.accepting  # none started: the next begin starts one
    assert slot.verdict(worker, TESTS[2], 1).status is Status.PASS  # type: ignore[arg-type]
    assert len(FakeJudgeProcess.started) == 2


def test_the_workers_dispatch_details_stay_on_the_judged_record(slot: JudgeSlot) -> None:
    executed = TestRecord(TESTS[0].id, Status.PASS, 0.1, "", {DISPATCH_KEY: {"add": "native"},
                                                               "other": 1})
    judged = slot.verdict(Evidence(), executed, 1)  # type: ignore[arg-type]
    assert judged.details == {DISPATCH_KEY: {"add": "native"}}


def test_only_the_kit_decides_what_does_not_apply() -> None:
    for status in (Status.SKIPPED, Status.NOT_APPLICABLE):
        settled = settled_by_worker(TestRecord(TESTS[0].id, status, 0.1, "vendor says so"))
        assert settled.status is Status.ERROR
        assert "only the kit decides what does not apply" in settled.message
    failed = TestRecord(TESTS[0].id, Status.UNSUPPORTED, 0.1, "no kernel")
    assert settled_by_worker(failed) == failed


def test_stop_stops_the_judge_once(slot: JudgeSlot) -> None:
    slot.start()
    slot.stop()
    slot.stop()
    assert FakeJudgeProcess.started[0].stopped
    assert len(FakeJudgeProcess.started) == 1
