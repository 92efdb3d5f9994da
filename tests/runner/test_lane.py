"""The judge-ahead lane over a fake worker and judge (``slot_helpers``): the worker runs ahead
of its judge within the window, records keep the plan's order, a failure voids what ran after
it."""

from __future__ import annotations

from slot_helpers import Fleet, slot, unit_ids

from kit.results import Status
from kit.rundir import JUDGED_SLOTS
from kit.runner.inputs import Deadlines
from kit.runner.lane import JUDGE_HELD_BYTES

ADDS = unit_ids("add", 8)


def test_the_window_keeps_the_plans_order() -> None:
    for eager in (False, True):  # a judge slower than the worker, and one as fast
        run = slot(Fleet(), eager=eager)
        records = run.run(ADDS)
        assert [r.id for r in records] == ADDS
        assert {r.status for r in records} == {Status.PASS}
        assert run.judges.most_held == (1 if eager else JUDGED_SLOTS)
        assert [t for t, _ in run.fleet.ran] == ADDS  # each ran once


def test_the_window_holds_no_more_evidence_than_allowed() -> None:
    run = slot(Fleet(evidence=JUDGE_HELD_BYTES))
    assert [r.id for r in run.run(ADDS)] == ADDS
    assert run.judges.most_held == 1


def test_a_failure_voids_the_tests_run_after_it() -> None:
    run = slot(Fleet(), {ADDS[2]: Status.FAIL_NUMERIC})
    records = run.run(ADDS)
    assert [r.id for r in records] == ADDS  # recorded once each, in order
    assert [r.status for r in records] == [Status.PASS] * 2 + [Status.FAIL_NUMERIC] + [
        Status.PASS] * 5
    runs = [t for t, _ in run.fleet.ran]
    # The tests run after the failure and before its verdict ran again after its probe.
    voided = run.judges.dropped
    assert voided and set(voided) <= set(ADDS[3:3 + JUDGED_SLOTS])
    assert {t for t in ADDS if runs.count(t) == 2} == {*voided, ADDS[2 + len(voided) + 1]}


def test_after_a_failure_the_next_test_is_judged_alone() -> None:
    run = slot(Fleet(), {ADDS[0]: Status.FAIL_NUMERIC})
    records = run.run(ADDS[:3])
    assert [r.id for r in records] == ADDS[:3]
    # add/1 and add/2 ran ahead, voided by add/0's failure; then add/1 is judged before the
    # worker runs on, and add/2 queued behind nothing again.
    assert run.judges.dropped == ADDS[1:3]
    assert run.judges.alone == [ADDS[1]]


def test_a_test_the_worker_failed_is_never_queued() -> None:
    fleet = Fleet(executions={ADDS[1]: Status.UNSUPPORTED})
    run = slot(fleet)
    records = run.run(ADDS[:3])
    assert [(r.id, r.status) for r in records] == [
        (ADDS[0], Status.PASS), (ADDS[1], Status.UNSUPPORTED), (ADDS[2], Status.PASS)]


def test_the_judge_gets_at_least_the_standards_time() -> None:
    deadlines = Deadlines(5.0, {"unit": 60.0})
    assert (deadlines.vendor(ADDS[0]), deadlines.judge(ADDS[0])) == (5.0, 60.0)
    assert Deadlines(None, {}).judge("models/hf/bert/eager") == 300.0
