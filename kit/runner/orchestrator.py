"""Plan a run, feed it to workers, journal every result, then report and sign."""

from __future__ import annotations

import collections
import datetime as dt
import os
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kit.device import DeviceInfo
from kit.errors import DeviceError, InputError
from kit.flows.config import refuse_untested_claims
from kit.hashing import kit_digest
from kit.outcomes import Inapplicable
from kit.results import NA_REASON_KEY, WORKER_DETAILS, Status, TestRecord, tier_of
from kit.rundir import JUDGED_SLOTS, PLANNED_IDS, RunDir
from kit.runner.config import RunConfig, load_run_file, save_run_file
from kit.runner.devices import DeviceSlots, assign_slots
from kit.runner.extra_slots import cores_to_spare, wait_until_paying
from kit.runner.journal import open_journal
from kit.runner.judge import judged_apart
from kit.runner.outdir import (
    check_run_dir_layout,
    claim_new_out_dir,
    refuse_finished_run,
)
from kit.runner.plan import Durations, Plan, make_plan
from kit.runner.pool import JudgeProcess, WorkerProcess, WorkerSpec
from kit.runner.probe import suspect_of
from kit.runner.progress import Progress
from kit.runner.threads import thread_share_env
from kit.standard import Standard, load_standard
from kit.tiers.registry import find_tier, get_tier, kit_inapplicable
from kit.vendors import SkipManifest, VendorProfile, load_skip_manifest, load_vendor
from kit.vendors.skip_limits import all_locked_ids, refuse_disallowed_entries

_RESTART_STATUSES = frozenset({Status.CRASH, Status.TIMEOUT})

#: The most evidence a worker's judge holds at once, in bytes, past its oldest test: a scale
#: test leaves hundreds of MiB, and the run directory's disk holds them all until judged.
JUDGE_HELD_BYTES = 1 << 30

#: After this many failures in a row of one op confirmed on fresh workers, its later failures
#: are no longer judged again (they are still probed: the probe tells a broken op from a broken
#: device).
BREAKER_FAILURES = 3

#: The failures a device's state can fake, judged again on a fresh worker after a failed probe.
_REJUDGED_STATUSES = frozenset({Status.FAIL_NUMERIC, Status.FAIL_SEMANTIC})


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

    worker: WorkerProcess
    record: TestRecord
    doubt: str | None = None


@dataclass
class _Lane:
    """One slot's state as its tests go (``Orchestrator._run_tests``)."""

    worker: WorkerProcess
    #: The tests the judge holds, oldest first, with the size of their evidence.
    judged: collections.deque[tuple[TestRecord, int]] = field(
        default_factory=collections.deque)
    #: Tests to run (again) before any pending one, in order.
    again: collections.deque[str] = field(default_factory=collections.deque)
    #: Whether the last verdict recorded passed: only then does the worker run ahead.
    passed: bool = True

    @property
    def held_bytes(self) -> int:
        return sum(size for _, size in self.judged)


@dataclass(frozen=True)
class RunInputs:
    standard: Standard
    vendor: VendorProfile
    skips: SkipManifest
    today: dt.date
    #: The tests this run executes: the whole scope, or its shard's part.
    plan: Plan


@dataclass(frozen=True)
class RunResult:
    out_dir: Path
    report: dict[str, Any]
    envelope: Path | None


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def load_inputs(config: RunConfig) -> RunInputs:
    """What the run judges by; a skip manifest the standard does not allow stops it here."""
    vendor = claiming(load_vendor(config.vendor), config.flows)
    standard = load_standard()
    refuse_untested_claims(standard, vendor.flows)
    skips = load_skip_manifest(vendor.skip_manifest_path)
    refuse_disallowed_entries(skips, standard, all_locked_ids(standard))
    durations = Durations.load(Path(config.durations)) if config.durations else None
    plan = make_plan(standard, config.tiers, config.select, config.shard, durations)
    return RunInputs(standard=standard, vendor=vendor, skips=skips, today=config.clock.today,
                     plan=plan)


def claiming(vendor: VendorProfile, flows: tuple[str, ...] | None) -> VendorProfile:
    """The profile as this run claims it: ``--flows`` replaces the flows it claims (the report
    records them where the profile's would be)."""
    return vendor if flows is None else replace(vendor, flows=flows)


def pins_of(inputs: RunInputs) -> dict[str, str]:
    """What must not change between the start of a run and its resume."""
    return {
        "kit_digest": kit_digest(),
        "vendor_profile_sha256": inputs.vendor.digest(),
        "skip_manifest_sha256": inputs.skips.sha256,
        # A run begun inside a reference container must not be finished on the host.
        "environment": os.environ.get("CKIT_CONTAINER", "host"),
        # A shard balanced on durations must keep its part: the same previous report.
        "durations_sha256": inputs.plan.durations_sha256 or "",
    }


def empty_plan_message(config: RunConfig) -> str:
    where = f" in shard {config.shard}" if config.shard is not None else ""
    return (f"no test{where} matches tiers {','.join(config.tiers)} "
            f"and --select {' '.join(config.select) or '(none)'}")


def skipped_record(inputs: RunInputs, test_id: str) -> TestRecord | None:
    decision = inputs.skips.decide(test_id, inputs.today)
    if not decision.skip or decision.entry is None:
        return None
    return TestRecord(test_id, Status.SKIPPED, 0.0, decision.entry.describe(), decision.details)


def inapplicable_record(inputs: RunInputs, test_id: str) -> TestRecord | None:
    found = kit_inapplicable(inputs.standard, inputs.vendor, test_id)
    return None if found is None else inapplicable_of(test_id, found)


def inapplicable_of(test_id: str, found: Inapplicable) -> TestRecord:
    details = {"reason": found.words, NA_REASON_KEY: found.reason.value}
    return TestRecord(test_id, Status.NOT_APPLICABLE, 0.0, found.words, details)


def decided_by_kit(inputs: RunInputs, test_id: str) -> TestRecord | None:
    """A test the kit settles without running it: not applicable, or skipped by the
    vendor's manifest."""
    return inapplicable_record(inputs, test_id) or skipped_record(inputs, test_id)


def write_planned_ids(run_dir: RunDir, planned: Iterable[str]) -> Path:
    """The plan, for the workers to collect only it (a resumed run writes it again)."""
    path = run_dir.workers / PLANNED_IDS
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{test_id}\n" for test_id in planned), encoding="utf-8")
    return path


def tier_paths(tiers: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(str(get_tier(tier).suite_dir) for tier in tiers)


class Orchestrator:
    def __init__(self, config: RunConfig, inputs: RunInputs, started_at: str) -> None:
        self.config = config
        self.inputs = inputs
        self.started_at = started_at
        self.journal = open_journal(config.out_dir)  # verifies the chain, cuts a torn line
        run_dir = RunDir(config.out_dir)
        self.spec = WorkerSpec(
            vendor=str(inputs.vendor.directory),
            today=config.today,
            paths=tier_paths(config.tiers),
            log_dir=run_dir.workers,
            env=_worker_env(config.workers or 1),
            dtypes=inputs.vendor.dtypes,
            flows=inputs.vendor.flows,
            planned_ids=write_planned_ids(run_dir, inputs.plan.tests),
        )
        #: Worker slots; with --devices, ``workers`` 0 means one per device.
        self.workers = config.workers or 1
        self.slots: DeviceSlots | None = None
        #: The device name each slot's first worker reported.
        self.slot_names: dict[int, str] = {}
        self._local = threading.local()  # the slot of the thread starting a worker
        self.ledger = ProbeLedger()
        self._worker_numbers = iter(range(1, 1_000_000))
        self._judge_numbers = iter(range(1, 1_000_000))
        self._progress: Progress | None = None
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
        return WorkerProcess(spec, next(self._worker_numbers))

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

    def timeout_for(self, test_id: str) -> float:
        """The vendor's time for one test: ``--timeout``, else the standard's for its tier."""
        if self.config.timeout_s is not None:
            return self.config.timeout_s
        return self.standard_timeout(test_id)

    def standard_timeout(self, test_id: str) -> float:
        return self.inputs.standard.timeouts.get(tier_of(test_id), 300.0)

    def judge_timeout_for(self, test_id: str) -> float:
        """The kit's own time to judge a test: never shorter than the standard's, since a
        ``--timeout`` narrowed for the vendor must not turn the kit's slow judging of a large
        test (a loaded machine, a 2^24-element reference) into an ERROR."""
        return max(self.timeout_for(test_id), self.standard_timeout(test_id))

    # -- planning ----------------------------------------------------------------------------
    def plan(self) -> list[str]:
        return list(self.inputs.plan.tests)

    def decided_by_kit(self, test_id: str) -> TestRecord | None:
        return decided_by_kit(self.inputs, test_id)

    def annotate(self, record: TestRecord) -> TestRecord:
        """A test matched by an expired entry ran anyway; a failing unit test says how to
        reproduce it; both go into its record."""
        decision = self.inputs.skips.decide(record.id, self.inputs.today)
        if decision.expired:
            record = replace(record, details={**record.details, **decision.details})
        tier = find_tier(record.id)
        if record.status.is_failure and tier is not None:
            absent = tier.absent_from_release(self.inputs.standard, record.id)
            if absent is not None:  # a canary's test its torch does not have: no verdict
                return inapplicable_of(record.id, absent)
            added = tier.failure_details(self.inputs.standard, record.id, self.config.vendor)
            record = replace(record, details={**record.details, **added})
        return record

    # -- execution ---------------------------------------------------------------------------
    def execute(self) -> dict[str, TestRecord]:
        first_judges = self.judge_slot()  # its judge starts while the first worker does
        try:
            return self._execute(first_judges)
        finally:
            first_judges.stop()
            # The last group fsynced, on Ctrl-C and errors too; the journal stays open for a
            # worker thread still finishing its test (its line is written, as before).
            self.journal.sync()

    def judge_slot(self) -> JudgeSlot:
        """A worker thread's judges, the first already starting when the run judges apart."""
        golden = self.config.out_dir if self.config.golden else None
        judges = JudgeSlot(self.spec.log_dir, self._judge_numbers, self.spec.env, golden,
                           self.config.tiers)
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
                       and (record := self.decided_by_kit(test_id)) is not None]
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
        done = sum(1 for t in plan if t in finished)
        failed = sum(1 for t in plan if t in finished and finished[t].status.is_failure)
        self._progress = Progress(len(plan), done, failed)
        self._device = ready.device
        if self.config.devices is not None:
            first = self._assign_devices(first)
        self._drive(first, first_judges, pending)
        planned = set(plan)
        return {t: r for t, r in self.journal.records.items() if t in planned}

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
        if self._extra_slot_pays(pending):
            self._work(None, None, pending, slot)

    def _extra_slot_pays(self, pending: queue.SimpleQueue[str]) -> bool:
        """At once with a core for each process, or a device assigned to each slot; else as
        soon as the run's recent pace says it pays (``extra_slots.wait_until_paying``)."""
        if self.config.devices is not None or cores_to_spare(self.workers):
            return True
        progress = self._progress
        assert progress is not None
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
            worker = worker or self.start_worker()
        except BaseException:
            judges.stop()
            raise
        try:
            self._run_tests(worker, judges, pending)
        finally:
            judges.stop()

    def _run_tests(
        self, worker: WorkerProcess, judges: JudgeSlot, pending: queue.SimpleQueue[str]
    ) -> None:
        """Run and judge the slot's tests, the worker running ahead of its judge.

        After a pass, each test the worker executes goes to the judge at once, queued behind
        those it holds (at most ``JUDGED_SLOTS`` tests and ``JUDGE_HELD_BYTES`` of evidence),
        and the worker goes on to the next: neither waits for the other while the queue has
        room. Verdicts are recorded in order as they come. A failure voids every test run
        after it (they ran on a device not yet probed): their verdicts are dropped and they
        run again after the probe, as a run waiting for each verdict would have run them.
        After a failure the next test is judged alone before the worker runs ahead again: a
        broken kernel fails test after test, and each failure would void those behind it.
        """
        lane = _Lane(worker)
        try:
            while not self._errors:
                test_id = lane.again.popleft() if lane.again else _next(pending)
                if test_id is None:
                    if not lane.judged:
                        return
                    self._settle_oldest(lane, judges)  # a failure sends tests back to run
                    continue
                executed = lane.worker.run(test_id, self.timeout_for(test_id))
                if not self._settle_held(lane, judges, test_id, wait=False):
                    continue  # a verdict that came meanwhile failed: ``test_id`` runs again
                if (lane.passed and judges.needs_judging(executed) and lane.worker.alive
                        and judges.accepting):
                    self._queue(lane, judges, executed)
                elif self._settle_held(lane, judges, test_id, wait=True):
                    self._conclude(lane, judges, self.annotate(judges.verdict(
                        lane.worker, executed, self.judge_timeout_for(test_id))),
                        fatal=_fatal(executed))
        finally:
            lane.worker.stop()  # the slot's current worker (restarts replaced the first)

    def _queue(self, lane: _Lane, judges: JudgeSlot, executed: TestRecord) -> None:
        """Hand ``executed`` to the judge once its queue has room (waiting for the oldest
        verdicts, which may void ``executed``: it then runs again)."""
        size = lane.worker.evidence_bytes()
        while lane.judged and (len(lane.judged) >= JUDGED_SLOTS
                               or lane.held_bytes + size > JUDGE_HELD_BYTES):
            if not self._settle_oldest(lane, judges, executed.id):
                return
        judges.begin(executed, lane.worker)
        lane.judged.append((executed, size))

    def _settle_held(self, lane: _Lane, judges: JudgeSlot, running: str, *, wait: bool
                     ) -> bool:
        """Record, in order, the verdicts the judge owes: every one (``wait``), or those it has
        given already. False where one failed (``running`` then runs again)."""
        while lane.judged and (wait or judges.answered):
            if not self._settle_oldest(lane, judges, running):
                return False
        return True

    def _settle_oldest(self, lane: _Lane, judges: JudgeSlot, running: str | None = None
                       ) -> bool:
        """Record the verdict on the oldest test the judge holds; True if it passed.

        A failure voids the tests run after it: the judge's verdicts on those it holds are
        dropped, and they, then ``running`` (executed, not handed over), run again first."""
        executed, _ = lane.judged.popleft()
        record = self.annotate(judges.finish(executed, self.judge_timeout_for(executed.id)))
        if record.status.is_failure:
            void = [later.id for later, _ in lane.judged]
            for later, _ in lane.judged:
                judges.drop(later, self.judge_timeout_for(later.id))
            lane.judged.clear()
            lane.again.extendleft(reversed([*void, *([running] if running else [])]))
            self._conclude(lane, judges, record)
            return False
        # Passed: the worker goes on as it is (a later test that killed it is replaced when
        # that test is recorded).
        lane.worker = self._record(AfterTest(lane.worker, record))
        lane.passed = True
        return True

    def _conclude(self, lane: _Lane, judges: JudgeSlot, record: TestRecord, *,
                  fatal: bool = False) -> None:
        """Record a verdict nothing run after it depends on: the worker is replaced, or probed
        after a failure, first (``_after``); a failure the probe casts doubt on is judged again
        on the fresh worker (``_rejudge``) and that verdict is recorded instead."""
        after = self._after(lane.worker, record, fatal=fatal)
        if after.doubt is not None:
            after = self._rejudge(after, judges)
        lane.worker = self._record(after)
        lane.passed = not after.record.status.is_failure

    def _record(self, after: AfterTest) -> WorkerProcess:
        """Journal a final record, learn from it; the worker to go on with."""
        self.ledger.observe(suspect_of(after.record.id), after.record.status)
        self.journal.append(after.record)
        assert self._progress is not None
        self._progress.advance(after.record.status.is_failure)
        return after.worker

    def _after(self, worker: WorkerProcess, record: TestRecord, *, fatal: bool = False,
               doubting: bool = True) -> AfterTest:
        """Replace a dead worker, retire one a fatal device error may have poisoned, probe a
        live one after any other failure (device poisoning).

        Only the worker decision changes here, never the record's status: the probe's verdict
        (or why none ran) goes into ``details["probe"]``. A numeric or semantic failure whose
        probe fails is returned in doubt (``doubting``; the breaker aside), to be judged again.
        """
        assert self._progress is not None
        suspect = suspect_of(record.id)
        if record.status in _RESTART_STATUSES or not worker.alive:
            self._progress.note(f"{record.status.value}: {record.id}: {record.message}; new worker")
            worker.kill()
            return AfterTest(self.start_worker(), record)
        if not record.status.is_failure:
            return AfterTest(worker, record)
        if fatal:  # the device raised: nothing else runs there, not even the probe
            self._progress.note(f"device error in {record.id}; new worker")
            worker.kill()
            return AfterTest(self.start_worker(), _with_probe(record, _RETIRED))
        report = worker.probe(self.ledger.suspects(suspect))
        if report.ok:
            return AfterTest(worker, _with_probe(record, report.message))
        self._progress.note(f"device unhealthy after {record.id} ({report.message}); new worker")
        fresh = self._replace(worker, suspect)
        verdict = f"unhealthy: {report.message}; new worker"
        doubt = doubting and record.status in _REJUDGED_STATUSES
        if doubt and self.ledger.tripped(suspect):
            skipped = (f"skipped: {suspect} failed on a fresh worker {BREAKER_FAILURES} times "
                       "in a row")
            details = {**record.details, "probe": verdict, "rejudged": skipped}
            return AfterTest(fresh, replace(record, details=details))
        return AfterTest(fresh, _with_probe(record, verdict), verdict if doubt else None)

    def _rejudge(self, after: AfterTest, judges: JudgeSlot) -> AfterTest:
        """Judge a failure in doubt again on the fresh worker; the second verdict stands.

        A failure the same test repeats on a worker that ran nothing before it is the op's
        (it feeds the breaker); a pass there was garbage the previous worker's device state
        left. Either way the record says what happened first (``details["rejudged"]``).
        """
        first, worker = after.record, after.worker
        executed = worker.run(first.id, self.timeout_for(first.id))
        again = self.annotate(judges.verdict(worker, executed,
                                             self.judge_timeout_for(first.id)))
        if again.status.is_failure:
            self.ledger.refailed(suspect_of(first.id))
        assert after.doubt is not None
        said = (f"{first.status.value} ({first.message}) on a worker whose probe then failed "
                f"({after.doubt}); judged again on a fresh worker")
        again = replace(again, details={**again.details, "rejudged": said})
        return self._after(worker, again, fatal=_fatal(executed), doubting=False)

    def _replace(self, worker: WorkerProcess, suspect: str | None) -> WorkerProcess:
        """A fresh worker, probed once more: what is wrong there too is a broken kernel.

        Poisoning is process state and a fresh worker is clean of it; a pool op still wrong on
        a worker that ran no test is broken for every input, so later probes leave it out (one
        restart per broken op instead of one per failing test). When that confirming probe
        itself raised or killed its worker, the worker is replaced once more.
        """
        assert self._progress is not None
        worker.kill()
        fresh = self.start_worker()
        confirm = fresh.probe(self.ledger.suspects(suspect))
        if confirm.ok:
            return fresh
        new = self.ledger.mark_broken(confirm.wrong_ops)
        if new:
            self._progress.note(
                f"probe op(s) {', '.join(sorted(new))} wrong on a fresh worker too "
                f"({confirm.message}): broken kernels, not device state; later probes skip them"
            )
        if confirm.fatal or not fresh.alive:
            fresh.kill()
            fresh = self.start_worker()
        return fresh

    def device_info(self) -> DeviceInfo:
        if self._device:
            device = self._device
            names = tuple(str(n) for n in device.get("names", ()))
            return DeviceInfo(device["type"], int(device["count"]), str(device["name"]), names)
        return DeviceInfo(self.inputs.vendor.device_type, 0, "not visible")


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

    def verdict(self, worker: WorkerProcess, executed: TestRecord, timeout: float) -> TestRecord:
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

    def begin(self, executed: TestRecord, worker: WorkerProcess) -> None:
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
        return _with_worker_details(record, executed)

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




def _next(pending: queue.SimpleQueue[str]) -> str | None:
    try:
        return pending.get_nowait()
    except queue.Empty:
        return None


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


def _with_worker_details(judged: TestRecord, executed: TestRecord) -> TestRecord:
    """The judged record, with what only the worker saw of the call (``WORKER_DETAILS``)."""
    kept = {key: executed.details[key] for key in WORKER_DETAILS if key in executed.details}
    return replace(judged, details={**judged.details, **kept}) if kept else judged


def _with_probe(record: TestRecord, verdict: str) -> TestRecord:
    return replace(record, details={**record.details, "probe": verdict})


#: ``details["probe"]`` of a test whose fatal device error retired its worker unprobed.
_RETIRED = "skipped: a fatal device error retires its worker; new worker"


def _fatal(executed: TestRecord) -> bool:
    """Whether the vendor's process ended the test with a device error (an exception other
    than not-implemented): the device's state afterwards is unknown, so its worker retires."""
    return executed.status is Status.ERROR


def _worker_env(workers: int) -> dict[str, str]:
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONHASHSEED": "0"}
    return {**env, **thread_share_env(workers)}


def prepare_new_run(config: RunConfig, inputs: RunInputs) -> str:
    """Write ``run.json`` into a new or empty output directory; returns the start time."""
    claim_new_out_dir(config.out_dir)  # never a run (or anything else) already there
    started_at = _now()
    save_run_file(config.out_dir, config, pins_of(inputs), started_at)
    return started_at


def prepare_resume(out_dir: Path) -> tuple[RunConfig, RunInputs, str]:
    check_run_dir_layout(out_dir)
    config, pins, started_at = load_run_file(out_dir)
    inputs = load_inputs(config)
    current = pins_of(inputs)
    for name, value in pins.items():
        if name == "environment" and current.get(name) != value:
            where = "on the host" if value == "host" else "inside a reference container"
            raise InputError(
                f"{out_dir}: cannot resume here: the run started {where} and must finish "
                "there; start a new run with another --out"
            )
        if current.get(name) != value:
            raise InputError(
                f"{out_dir}: cannot resume: {name.replace('_', ' ')} changed since the run "
                "started; start a new run with another --out"
            )
    refuse_finished_run(out_dir)
    return config, inputs, started_at
