"""What follows a verdict, over a fake worker and judge (``slot_helpers``): the probe, the
worker's retirement, the re-judgement on a fresh worker and the breaker that ends it."""

from __future__ import annotations

import io

import pytest
from slot_helpers import HEALTHY, Fleet, slot, unit_ids

from kit.results import Status, TestRecord
from kit.runner.aftercare import BREAKER_FAILURES, RETIRED, ProbeLedger
from kit.runner.progress import Progress

ERF = unit_ids("erf", 6)


def test_a_failure_whose_probe_passes_keeps_its_worker() -> None:
    run = slot(Fleet(), {ERF[0]: Status.FAIL_NUMERIC})
    records = run.run(ERF[:2])
    assert [r.status for r in records] == [Status.FAIL_NUMERIC, Status.PASS]
    assert records[0].details["probe"] == HEALTHY.message
    assert "rejudged" not in records[0].details
    assert len(run.fleet.started) == 1
    assert run.fleet.started[0].probes == [["erf"]]  # the failing op left out of the probe


def test_a_fatal_error_retires_its_worker_unprobed() -> None:
    fleet = Fleet(executions={ERF[0]: Status.ERROR})
    run = slot(fleet)
    records = run.run(ERF[:2])
    assert records[0].status is Status.ERROR
    assert records[0].details["probe"] == RETIRED
    first, fresh = fleet.started
    assert first.killed and first.probes == []
    assert fleet.ran == [(ERF[0], 1), (ERF[1], 2)]  # the next test runs on the fresh worker


def test_a_crashed_worker_is_replaced_without_a_probe() -> None:
    fleet = Fleet(executions={ERF[0]: Status.CRASH})
    records = slot(fleet).run(ERF[:2])
    assert [r.status for r in records] == [Status.CRASH, Status.PASS]
    assert "probe" not in records[0].details
    assert [w.probes for w in fleet.started] == [[], []]


def test_a_failure_whose_probe_fails_is_judged_again_on_the_fresh_worker() -> None:
    # Wrong on worker 1 only: garbage its device's state left.
    fleet = Fleet(sick_after=True)
    run = slot(fleet, {(ERF[0], 1): Status.FAIL_NUMERIC})
    records = run.run(ERF[:2])
    assert [r.status for r in records] == [Status.PASS, Status.PASS]
    said = records[0].details["rejudged"]
    assert said.startswith("FAIL_NUMERIC (judged FAIL_NUMERIC) on a worker whose probe then "
                           "failed (unhealthy: add/float32 wrong values")
    assert said.endswith("; new worker); judged again on a fresh worker")
    # erf/1 ran ahead on worker 1 (voided by the failure), then after the re-judgement.
    assert fleet.ran == [(ERF[0], 1), (ERF[1], 1), (ERF[0], 2), (ERF[1], 2)]
    assert run.care.ledger.suspects(None) == []  # passed on the fresh worker: not a failure


def test_a_crash_or_timeout_is_never_judged_again() -> None:
    fleet = Fleet(executions={ERF[0]: Status.TIMEOUT}, sick_after=True)
    records = slot(fleet).run(ERF[:1])
    assert records[0].status is Status.TIMEOUT
    assert "rejudged" not in records[0].details


def test_the_breaker_stops_judging_again_after_three_failures_on_fresh_workers() -> None:
    fleet = Fleet(sick_after=True)
    run = slot(fleet, dict.fromkeys(ERF, Status.FAIL_NUMERIC))
    records = run.run(ERF[:BREAKER_FAILURES + 2])
    assert [r.status for r in records] == [Status.FAIL_NUMERIC] * (BREAKER_FAILURES + 2)
    for record in records[:BREAKER_FAILURES]:
        assert record.details["rejudged"].endswith("judged again on a fresh worker")
    skipped = f"skipped: erf failed on a fresh worker {BREAKER_FAILURES} times in a row"
    for record in records[BREAKER_FAILURES:]:
        assert record.details["rejudged"] == skipped
        assert record.details["probe"].startswith("unhealthy: ")  # still probed
    # After the window's first pass (voided by erf/0's failure), each test runs alone: the
    # first three again on a fresh worker, the rest once.
    again = [test_id for test_id, _ in fleet.ran[fleet.ran.index((ERF[0], 2)):]]
    assert again == [ERF[0], ERF[1], ERF[1], ERF[2], ERF[2], ERF[3], ERF[4]]


def test_a_pass_resets_the_breaker() -> None:
    ledger = ProbeLedger()
    for _ in range(BREAKER_FAILURES):
        ledger.refailed("erf")
    assert ledger.tripped("erf")
    ledger.observe("erf", Status.PASS)
    assert not ledger.tripped("erf")


def test_aftercare_journals_and_counts_each_record_once() -> None:
    run = slot(Fleet())
    worker = run.lane.worker
    after = run.care.conclude(worker, run.judges, TestRecord(ERF[0], Status.PASS, 0.1))
    assert after.worker is worker
    assert [r.id for r in run.journal.records] == [ERF[0]]
    assert run.care.progress.done == 1 and run.care.progress.failed == 0


class _Terminal(io.StringIO):
    """A stream that says it is a terminal, as stderr is to a person watching a run."""

    def isatty(self) -> bool:
        return True


def test_the_progress_line_names_the_tier_and_the_test_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "160")  # the terminal's width, as shutil reads it
    run = slot(Fleet())
    terminal = _Terminal()
    run.care.progress = Progress(2, stream=terminal)
    run.run(ERF[:2])
    frames = terminal.getvalue().split("\r\033[K")
    assert f"0/2 failed 0 ETA --:-- | tier unit: {ERF[0]}" in frames[1]
    assert any(frame.endswith(f"| tier unit: {ERF[1]}") and "1/2" in frame for frame in frames)
    assert frames[-1].startswith("[########################] 2/2 failed 0 ETA")
    assert "erf" not in frames[-1]  # the run is over: no test is running


def test_the_eta_times_each_tier_at_its_own_pace(monkeypatch: pytest.MonkeyPatch) -> None:
    """A complete run starts with its slowest tier: its pace says nothing of the unit tier's
    thousands of fast tests, which are not guessed at until one of them finishes."""
    import kit.runner.progress as progress_module

    clock = [0.0]
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: clock[0])
    progress = Progress(1003, stream=io.StringIO(), left_by_tier={"compile": 3, "unit": 1000})
    assert progress.remaining_s() is None and "ETA --:--" in progress.line()
    clock[0] = 20.0
    progress.advance(False, "compile/models/hf/bert/eager")
    assert progress.remaining_s() == 40.0  # two compiled models left at 20 s each
    assert "ETA 00:40+" in progress.line()  # and the unit tier, not timed yet
    clock[0] = 60.0
    progress.advance(False, "compile/models/hf/gpt2/eager")
    progress.advance(False, "compile/models/hf/t5/eager")
    clock[0] = 60.5
    progress.advance(False, "unit/opinfo/add/float32/0")
    assert progress.remaining_s() == 999 * 0.5
    assert "ETA 08:19 |" in progress.line() or progress.line().endswith("ETA 08:19")


def test_a_long_test_id_is_cut_to_one_terminal_line() -> None:
    progress = Progress(10)
    progress.running = "unit/opinfo/" + "x" * 200 + "/float32/0"
    line = progress.line(width=100)
    assert len(line) == 100 and line.endswith("x/float32/0") and "| tier unit: ..." in line
