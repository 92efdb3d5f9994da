"""What a slot's loop asks of its worker, its judges and its record sink.

``WorkerProcess``, ``JudgeSlot`` and ``Journal`` have these methods; so do the fakes of
``tests/runner``, which drive the judge-ahead lane and the worker aftercare without a process.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from kit.results import TestRecord
from kit.runner.probe import ProbeReport


class Worker(Protocol):
    """A worker as a slot uses it: executes tests, probes the device, dies, is replaced."""

    @property
    def alive(self) -> bool: ...

    def run(self, test_id: str, timeout: float) -> TestRecord: ...

    def probe(self, suspects: list[str]) -> ProbeReport: ...

    def evidence_bytes(self) -> int: ...

    def hand_over_evidence(self, slot: int) -> Path: ...

    def kill(self) -> None: ...

    def stop(self) -> None: ...


class Judges(Protocol):
    """A slot's judge (``JudgeSlot``): answers in the order tests were begun."""

    def verdict(self, worker: Worker, executed: TestRecord, timeout: float) -> TestRecord: ...

    def needs_judging(self, executed: TestRecord) -> bool: ...

    def begin(self, executed: TestRecord, worker: Worker) -> None: ...

    def finish(self, executed: TestRecord, timeout: float) -> TestRecord: ...

    def drop(self, executed: TestRecord, timeout: float) -> None: ...

    @property
    def answered(self) -> bool: ...

    @property
    def accepting(self) -> bool: ...


class RecordSink(Protocol):
    """Where final records go (the run's ``Journal``)."""

    def append(self, record: TestRecord) -> None: ...
