"""The worker calls a plain kit test directly (``direct_call``) instead of running pytest's
per-test protocol: each way of ending a test must get the very verdict the protocol gives, and a
test the protocol has more to do for (a marker, another fixture) must still go through it."""

from __future__ import annotations

import datetime as dt

import pytest
from _pytest.runner import runtestprotocol

from kit.pytest_plugin import CONTEXT_KEY, build_context, direct_call, direct_verdict
from kit.results import Status
from kit.runner.worker import record_from_reports

pytest_plugins = ["pytester"]

#: One kit-shaped test per way a test ends; ``case`` is its stable id, as in the tier suites.
ENDINGS = '''
import pytest
from kit.outcomes import NotApplicableReason, ResultMismatch, not_applicable

ENDINGS = ["unit/x/passes/float32/0", "unit/x/mismatch/float32/0", "unit/x/unsupported/float32/0",
           "unit/x/kit-skip/float32/0", "unit/x/vendor-skip/float32/0", "unit/x/crash/float32/0",
           "unit/x/fail/float32/0"]

@pytest.mark.parametrize("case", ENDINGS, ids=ENDINGS)
def test_ending(case, ckit):
    ckit.notes["dispatch"] = {"native": ["aten::add.Tensor"]}
    how = case.split("/")[2]
    if how == "mismatch":
        raise ResultMismatch("output: shape (2,) != expected (3,)", failure="wrong-shape")
    if how == "unsupported":
        raise NotImplementedError("no kernel for add")
    if how == "kit-skip":
        not_applicable(NotApplicableReason.UNCLAIMED_DTYPE, "float32 is not claimed")
    if how == "vendor-skip":
        pytest.skip("the vendor's own skip")
    if how == "crash":
        raise KeyError("lost")
    if how == "fail":
        pytest.fail("failed on purpose\\nsecond line")

@pytest.mark.parametrize("case", ["unit/x/marked/float32/0"], ids=["unit/x/marked/float32/0"])
@pytest.mark.filterwarnings("error")
def test_marked(case, ckit):
    pass

@pytest.fixture
def extra():
    return 1

@pytest.mark.parametrize("case", ["unit/x/fixture/float32/0"], ids=["unit/x/fixture/float32/0"])
def test_more_fixtures(case, ckit, extra):
    pass
'''


def _items(pytester: pytest.Pytester) -> dict[str, pytest.Item]:
    items = pytester.getitems(ENDINGS)
    context = build_context("cpu", dt.date.today())
    for item in items:
        item.config.stash[CONTEXT_KEY] = context
    return {item.callspec.id: item for item in items}  # type: ignore[attr-defined]


def test_every_ending_gets_the_protocols_verdict(pytester: pytest.Pytester) -> None:
    items = _items(pytester)
    endings = [test_id for test_id in items if "/x/marked/" not in test_id
               and "/x/fixture/" not in test_id]
    seen = set()
    for test_id in endings:
        item = items[test_id]
        context = item.config.stash[CONTEXT_KEY]
        call = direct_call(item, context)
        assert call is not None, test_id
        direct = direct_verdict(call, context).record(test_id, 0.0)
        reports = runtestprotocol(item, log=False, nextitem=None)
        protocol = record_from_reports(test_id, reports, 0.0)
        assert (direct.status, direct.message, direct.details) == (
            protocol.status, protocol.message, protocol.details), test_id
        seen.add(direct.status)
    # The endings cover every status a unit test's own code can reach.
    assert seen == {Status.PASS, Status.FAIL_SEMANTIC, Status.UNSUPPORTED, Status.NOT_APPLICABLE,
                    Status.ERROR}


def test_a_marked_test_or_one_with_more_fixtures_goes_through_the_protocol(
    pytester: pytest.Pytester,
) -> None:
    items = _items(pytester)
    for test_id in ("unit/x/marked/float32/0", "unit/x/fixture/float32/0"):
        item = items[test_id]
        assert direct_call(item, item.config.stash[CONTEXT_KEY]) is None, test_id
    assert direct_call(items["unit/x/passes/float32/0"], None) is None  # no kit context
