"""The run's coordinator: starts the slots' workers and judges, hands out the planned test ids,
and leaves each slot's tests to its lane (``kit.runner.lane``) and what follows a verdict to
the aftercare (``kit.runner.aftercare``). What the run judges by is ``kit.runner.inputs``, what
the kit decides itself ``kit.runner.decisions``, the run directory's life
``kit.runner.lifecycle``."""

from __future__ import annotations

import collections
import itertools
import queue
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from kit.device import DeviceInfo
from kit.errors import DeviceError, InputError
from kit.results import TestRecord, tier_of
from kit.rundir import RunDir
from kit.runner.aftercare import Aftercare, ProbeLedger
from kit.runner.config import RunConfig
from kit.runner.decisions import annotate, decided_by_kit
from kit.runner.devices import DeviceSlots, assign_slots
from kit.runner.extra_slots import cores_to_spare, wait_until_paying
from kit.runner.forked import ForkServers
from kit.runner.inputs import Deadlines, RunInputs, empty_plan_message
from kit.runner.journal import open_journal
from kit.runner.judge import judged_apart
from kit.runner.judge_slot import JudgeSlot
from kit.runner.lane import Lane
from kit.runner.lifecycle import write_planned_ids
from kit.runner.pool import WorkerProcess, WorkerSpec
from kit.runner.probe import suspect_of
from kit.runner.progress import Progress
from kit.runner.slot_roles import Worker
from kit.runner.threads import thread_share_env
from kit.test_ids import tiers_with_tests
from kit.tiers.registry import get_tier


class Orchestrator:
    def __init__(self, config: RunConfig, inputs: RunInputs, started_at: str) -> None:
        self.config = config
        self.inputs = inputs
        self.started_at = started_at
        self.journal = open_journal(config.out_dir)  # verifies the chain, cuts a torn line
        run_dir = RunDir(config.out_dir)
        #: The run's tiers with a planned test: all a worker collects and a judge warms up (a
        #: narrowed run's processes import nothing of the tiers it left out: seconds each).
        self.tiers = tiers_with_tests(config.tiers, inputs.plan.tests)
        self.spec = WorkerSpec(
            vendor=str(inputs.vendor.directory),
            today=config.today,
            paths=tier_paths(self.tiers),
            log_dir=run_dir.workers,
            env=_worker_env(config.workers or 1),
            dtypes=inputs.vendor.dtypes,
            flows=inputs.vendor.flows,
            planned_ids=write_planned_ids(run_dir, inputs.plan.tests),
            timeout_s=config.timeout_s,
        )
        #: Where workers start from: a process that has imported what they import.
        self.forks = ForkServers(run_dir.workers, self.tiers)
        self.deadlines = Deadlines.of(config, inputs)
        #: Worker slots; with --devices, ``workers`` 0 means one per device.
        self.workers = config.workers or 1
        self.slots: DeviceSlots | None = None
        #: The device name each slot's first worker reported.
        self.slot_names: dict[int, str] = {}
        self._local = threading.local()  # the slot of the thread starting a worker
        self.ledger = ProbeLedger()
        self._worker_numbers = itertools.count(1)
        self._judge_numbers = itertools.count(1)
        self._care: Aftercare | None = None  # once the first worker is ready
        self._device: dict[str, Any] | None = None
        self._errors: list[BaseException] = []

    # -- workers -----------------------------------------------------------------------------
    def start_worker(self) -> WorkerProcess:
        return self._ready_worker(self._spawn_worker())

    def _spawn_worker(self) -> WorkerProcess:
        """A worker process, starting (``_ready_worker`` waits for it)."""
        slot: int | None = getattr(self._local, "slot", None)
        spec = self.spec
        if slot is not None and self.slots is not None:
            spec = replace(spec, env={**spec.env, **self.slots.env_for(slot)})
        return WorkerProcess(spec, next(self._worker_numbers), self.forks.server_for(spec.env))

    def _ready_worker(self, worker: WorkerProcess) -> WorkerProcess:
        slot: int | None = getattr(self._local, "slot", None)
        ready = worker.wait_ready()
        if slot is not None and slot not in self.slot_names:
            device = ready.device or {}
            self.slot_names[slot] = str(device.get("name", ""))
        return worker

    def _assign_devices(self, census: WorkerProcess) -> WorkerProcess:
        """Give each slot its device (--devices); returns slot 0's worker.

        The first worker saw every device (it ran without a slot): it counts them and names
        them for the report, then makes way for slot 0's own.
        """
        assert self.config.devices is not None
        visible = int((census.ready.device or {}).get("count", 0))
        census.stop()
        vendor = self.inputs.vendor
        self.slots = assign_slots(self.config.devices, visible, self.config.workers,
                                  vendor.device_env, vendor.device_type)
        self.workers = len(self.slots.indices)
        self.spec = replace(self.spec, env=_worker_env(self.workers))
        self._local.slot = 0
        return self.start_worker()

    # -- planning ----------------------------------------------------------------------------
    def plan(self) -> list[str]:
        return list(self.inputs.plan.tests)

    def annotate(self, record: TestRecord) -> TestRecord:
        """What the kit adds to a verdict (``kit.runner.decisions.annotate``)."""
        return annotate(self.inputs, self.config.vendor, record)

    # -- execution ---------------------------------------------------------------------------
    def execute(self) -> dict[str, TestRecord]:
        first_judges = self.judge_slot()  # its judge starts while the first worker does
        try:
            return self._execute(first_judges)
        finally:
            first_judges.stop()
            self.forks.close()
            # The last group fsynced, on Ctrl-C and errors too; the journal stays open for a
            # worker thread still finishing its test (its line is written, as before).
            self.journal.sync()

    def judge_slot(self) -> JudgeSlot:
        """A worker thread's judges, the first already starting when the run judges apart."""
        golden = self.config.out_dir if self.config.golden else None
        judges = JudgeSlot(self.spec.log_dir, self._judge_numbers, self.spec.env, golden,
                           self.tiers)
        if any(map(judged_apart, self.plan())):
            judges.start()
        return judges

    def _execute(self, first_judges: JudgeSlot) -> dict[str, TestRecord]:
        first = self._spawn_worker()
        plan = self.plan()
        finished = self.journal.records  # verified when the journal was opened
        # Decided while the worker starts (seconds for a whole standard), journaled once it
        # has: a run whose device is missing journals nothing.
        try:
            settled = [record for test_id in plan if test_id not in finished
                       and (record := decided_by_kit(self.inputs, test_id)) is not None]
        except BaseException:
            first.kill()
            raise
        ready = self._ready_worker(first).ready
        problem = ready.device_problem
        if problem and all(get_tier(tier).needs_device for tier in self.config.tiers):
            first.stop()
            raise DeviceError(problem)
        if not plan:
            first.stop()
            raise InputError(empty_plan_message(self.config))
        for record in finished.values():  # a resumed run keeps what it learned about ops
            self.ledger.observe(suspect_of(record.id), record.status)
        for record in settled:
            self.journal.append(record)
            finished[record.id] = record
        pending: queue.SimpleQueue[str] = queue.SimpleQueue()
        for test_id in plan:
            if test_id not in finished:
                pending.put(test_id)
        self._care = self._aftercare(plan, finished)
        self._device = ready.device
        if self.config.devices is not None:
            first = self._assign_devices(first)
        self._drive(first, first_judges, pending)
        planned = set(plan)
        return {t: r for t, r in self.journal.records.items() if t in planned}

    def _aftercare(self, plan: list[str], finished: dict[str, TestRecord]) -> Aftercare:
        """The slots' shared aftercare, its progress line counting what the run has already."""
        done = sum(1 for t in plan if t in finished)
        failed = sum(1 for t in plan if t in finished and finished[t].status.is_failure)
        left = collections.Counter(tier_of(t) for t in plan if t not in finished)
        progress = Progress(len(plan), done, failed, left_by_tier=left)
        return Aftercare(ledger=self.ledger, start_worker=self.start_worker,
                         journal=self.journal, progress=progress,
                         annotate=self.annotate, deadlines=self.deadlines)

    def _drive(
        self, first: WorkerProcess, first_judges: JudgeSlot, pending: queue.SimpleQueue[str]
    ) -> None:
        # The first thread takes the worker that announced the collection, and the judges
        # started beside it; others start their own.
        threads = [threading.Thread(target=self._guard,
                                    args=(self._work, first, first_judges, pending, 0),
                                    daemon=True)]
        threads += [
            threading.Thread(target=self._guard, args=(self._extra_slot, pending, slot),
                             daemon=True)
            for slot in range(1, self.workers)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            while thread.is_alive():
                thread.join(timeout=0.5)  # short joins keep Ctrl-C responsive
        if self._errors:
            raise self._errors[0]

    def _extra_slot(self, pending: queue.SimpleQueue[str], slot: int) -> None:
        """A second or later slot: started when it pays (``kit.runner.extra_slots``)."""
        if self._extra_slot_pays(pending, slot):
            self._work(None, None, pending, slot)

    def _extra_slot_pays(self, pending: queue.SimpleQueue[str], slot: int) -> bool:
        """At once with a core for each process of the slots up to this one, or a device
        assigned to each slot; else as soon as the run's recent pace says it pays
        (``extra_slots.wait_until_paying``)."""
        if self.config.devices is not None or cores_to_spare(slot + 1):
            return True
        assert self._care is not None
        progress = self._care.progress
        return wait_until_paying(
            progress, lambda: bool(self._errors) or pending.empty(), progress.note)

    def _guard(self, target: Callable[..., None], *args: Any) -> None:
        try:
            target(*args)
        except BaseException as exc:  # surfaced by _drive in the main thread
            self._errors.append(exc)

    def _work(
        self,
        worker: WorkerProcess | None,
        judges: JudgeSlot | None,
        pending: queue.SimpleQueue[str],
        slot: int,
    ) -> None:
        self._local.slot = slot if self.slots is not None else None
        judges = judges or self.judge_slot()
        try:
            started: Worker = worker or self.start_worker()
        except BaseException:
            judges.stop()
            raise
        assert self._care is not None
        lane = Lane(started, judges, self._care, deadlines=self.deadlines,
                    annotate=self.annotate, stopped=lambda: bool(self._errors))
        try:
            lane.run(pending)
        finally:
            judges.stop()

    def device_info(self) -> DeviceInfo:
        if self._device:
            device = self._device
            names = tuple(str(n) for n in device.get("names", ()))
            return DeviceInfo(device["type"], int(device["count"]), str(device["name"]), names)
        return DeviceInfo(self.inputs.vendor.device_type, 0, "not visible")


def tier_paths(tiers: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(str(get_tier(tier).suite_dir) for tier in tiers)


def _worker_env(workers: int) -> dict[str, str]:
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONHASHSEED": "0"}
    return {**env, **thread_share_env(workers)}
