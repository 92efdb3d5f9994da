"""Fakes of a slot's worker, judges and journal: the lane and the aftercare driven without a
process (``kit.runner.slot_roles``), each run over in milliseconds.

A ``Fleet`` starts the workers, numbered from 1. A worker executes every test as PASS unless
``Fleet.executions`` says otherwise; its probe finds the device unhealthy once it ran a failing
test (``Fleet.sick_after``), a fresh worker's is healthy. The judges pass what the worker
passed unless ``verdicts`` names the test, on any worker or on one (``(id, number)``).
"""

from __future__ import annotations

import collections
import io
import queue
from dataclasses import dataclass, field
from pathlib import Path

from kit.results import Status, TestRecord
from kit.rundir import JUDGED_SLOTS
from kit.runner.aftercare import Aftercare, ProbeLedger
from kit.runner.inputs import Deadlines
from kit.runner.lane import Lane
from kit.runner.probe import ProbeFinding, ProbeReport
from kit.runner.progress import Progress
from kit.runner.slot_roles import Worker

#: A probe that finds the device healthy, and one that finds it not.
HEALTHY = ProbeReport(checked=6)
UNHEALTHY = ProbeReport((ProbeFinding("add", "float32", "wrong values (3 of 8)"),), checked=6)


@dataclass
class Fleet:
    #: How a worker ends a test other than PASS, by test id.
    executions: dict[str, Status] = field(default_factory=dict)
    #: Whether a worker's probe fails once the worker ran a test the judges failed.
    sick_after: bool = False
    #: The evidence each test leaves, in bytes.
    evidence: int = 1
    started: list[FakeWorker] = field(default_factory=list)
    #: Every execution, in order: (test id, worker number).
    ran: list[tuple[str, int]] = field(default_factory=list)

    def start(self) -> FakeWorker:
        worker = FakeWorker(self, len(self.started) + 1)
        self.started.append(worker)
        return worker


class FakeWorker:
    def __init__(self, fleet: Fleet, number: int) -> None:
        self.fleet = fleet
        self.number = number
        self.alive = True
        self.probes: list[list[str]] = []
        self.killed = False
        #: Whether a test it ran was failed (its device "poisoned", for ``Fleet.sick_after``).
        self.tainted = False

    def run(self, test_id: str, timeout: float) -> TestRecord:
        assert self.alive, f"worker {self.number} is dead"
        self.fleet.ran.append((test_id, self.number))
        status = self.fleet.executions.get(test_id, Status.PASS)
        if status in (Status.CRASH, Status.TIMEOUT):
            self.alive = False
        return TestRecord(test_id, status, 0.01, status.value.lower(), {"worker": self.number})

    def probe(self, suspects: list[str]) -> ProbeReport:
        self.probes.append(suspects)
        return UNHEALTHY if self.fleet.sick_after and self.tainted else HEALTHY

    def evidence_bytes(self) -> int:
        return self.fleet.evidence

    def hand_over_evidence(self, slot: int) -> Path:
        return Path(f"evidence-{self.number}-judged-{slot}.bin")

    def kill(self) -> None:
        self.alive, self.killed = False, True

    def stop(self) -> None:
        self.alive = False


class FakeJudges:
    """Judges in the order begun, like ``JudgeSlot``; ``answered`` only when ``eager``."""

    def __init__(self, fleet: Fleet, verdicts: dict[str | tuple[str, int], Status],
                 *, eager: bool = False) -> None:
        self.fleet = fleet
        self.verdicts = verdicts
        self.eager = eager
        self.held: collections.deque[TestRecord] = collections.deque()
        self.most_held = 0
        self.dropped: list[str] = []
        #: Tests judged at once (``verdict``), not queued.
        self.alone: list[str] = []

    def verdict(self, worker: Worker, executed: TestRecord, timeout: float) -> TestRecord:
        if self.needs_judging(executed):
            self.alone.append(executed.id)
            self.begin(executed, worker)
            return self.finish(executed, timeout)
        return executed

    def needs_judging(self, executed: TestRecord) -> bool:
        return executed.status is Status.PASS

    def begin(self, executed: TestRecord, worker: Worker) -> None:
        assert len(self.held) < JUDGED_SLOTS
        worker.hand_over_evidence(len(self.held))
        self.held.append(executed)
        self.most_held = max(self.most_held, len(self.held))

    def finish(self, executed: TestRecord, timeout: float) -> TestRecord:
        oldest = self.held.popleft()
        assert oldest.id == executed.id, "a verdict taken for another test"
        number = int(oldest.details["worker"])
        status = self.verdicts.get((oldest.id, number), self.verdicts.get(oldest.id, Status.PASS))
        if status.is_failure:
            self.fleet.started[number - 1].tainted = True
        return TestRecord(oldest.id, status, oldest.duration_s, f"judged {status.value}")

    def drop(self, executed: TestRecord, timeout: float) -> None:
        self.finish(executed, timeout)
        self.dropped.append(executed.id)

    @property
    def answered(self) -> bool:
        return self.eager and bool(self.held)

    @property
    def accepting(self) -> bool:
        return True


class ListJournal:
    def __init__(self) -> None:
        self.records: list[TestRecord] = []

    def append(self, record: TestRecord) -> None:
        self.records.append(record)


@dataclass
class Slot:
    """One slot over fakes: its fleet, judges, journal, aftercare and lane."""

    fleet: Fleet
    judges: FakeJudges
    journal: ListJournal
    care: Aftercare
    lane: Lane

    def run(self, tests: list[str]) -> list[TestRecord]:
        self.lane.run(pending(tests))
        return self.journal.records


def pending(tests: list[str]) -> queue.SimpleQueue[str]:
    waiting: queue.SimpleQueue[str] = queue.SimpleQueue()
    for test_id in tests:
        waiting.put(test_id)
    return waiting


def slot(fleet: Fleet, verdicts: dict[str | tuple[str, int], Status] | None = None,
         *, eager: bool = False) -> Slot:
    judges = FakeJudges(fleet, verdicts or {}, eager=eager)
    journal = ListJournal()
    deadlines = Deadlines(None, {"unit": 60.0})
    care = Aftercare(ledger=ProbeLedger(), start_worker=fleet.start, journal=journal,
                     progress=Progress(0, stream=io.StringIO()), annotate=lambda r: r,
                     deadlines=deadlines)
    lane = Lane(fleet.start(), judges, care, deadlines=deadlines, annotate=lambda r: r,
                stopped=lambda: False)
    return Slot(fleet, judges, journal, care, lane)


def unit_ids(op: str, count: int) -> list[str]:
    return [f"unit/opinfo/{op}/float32/{n}" for n in range(count)]
