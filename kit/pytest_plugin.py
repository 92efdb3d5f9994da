"""The kit's pytest plugin: turns the tier suites under ``kit/tiers`` into vendor conformance tests.

Active only when a vendor is named (``--ckit-vendor ID`` or ``CKIT_VENDOR``); then only the tier
suites are collected, so ``pytest --ckit-vendor cpu -k "add and float32"`` reruns single tests.

Contract for tier suites: every test takes one parameter ``case`` whose pytest id is the test's
stable id (``unit/opinfo/add/float32/0``), and the session fixture ``ckit`` (a ``KitContext``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import os
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from kit import paths
from kit.clock import utc_today
from kit.context import KitContext
from kit.device import enable_device
from kit.errors import DeviceError, KitError
from kit.outcomes import EMPTY, DeviceUnusable, KitDecision, KitSkip, ManifestSkip, verdict_of
from kit.patterns import matches_any
from kit.results import Status, Verdict
from kit.standard import load_standard
from kit.tiers.registry import find_tier
from kit.vendors import load_skip_manifest, load_vendor

TIERS_DIR = paths.package_dir() / "tiers"
CONTEXT_KEY = pytest.StashKey[KitContext]()
#: What the kit decided of an item instead of running it (its setup raises it as a ``KitSkip``).
DECISION_KEY = pytest.StashKey[KitDecision]()
#: The attribute of a phase's ``TestReport`` that holds the kit's ``Verdict`` on it.
VERDICT_ATTRIBUTE = "ckit_verdict"


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from kit import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ckit", "accelerator conformance kit")
    group.addoption(
        "--ckit-vendor",
        default=os.environ.get("CKIT_VENDOR"),
        help="vendor id (vendors/<id>) whose device the tier suites run on; env CKIT_VENDOR",
    )
    group.addoption(
        "--ckit-select",
        action="append",
        default=[],
        metavar="GLOB",
        help="run only tests whose stable id matches GLOB (repeatable), e.g. 'unit/opinfo/add/*/*'",
    )
    group.addoption(
        "--ckit-evidence",
        default=None,
        metavar="PATH",
        help="(ckit run's workers) only execute each test on the device and save its evidence "
        "to PATH for the kit's judge process, instead of judging it here",
    )
    group.addoption(
        "--ckit-flows",
        default=None,
        metavar="LIST",
        help="the flows the run claims, comma-separated, instead of the profile's `flows`",
    )
    group.addoption(
        "--ckit-timeout",
        default=None,
        type=float,
        metavar="SECONDS",
        help="(ckit run's workers) the run's --timeout: each test's time on the device in "
        "place of the standard's limit for its tier",
    )
    group.addoption(
        "--ckit-ids",
        default=None,
        metavar="FILE",
        help="(ckit run's workers) collect only the stable ids listed in FILE, one per line: "
        "a narrowed run's worker does not build the whole standard's parametrization",
    )
    group.addoption(
        "--ckit-today",
        default=os.environ.get("CKIT_TODAY"),
        help="date (YYYY-MM-DD) used to judge skip-manifest expiry, for the kit's own tests; "
        "default: the clock's (a ckit run given CKIT_TODAY is not certifiable); env CKIT_TODAY",
    )


def locked_cases(config: pytest.Config, tier: str, prefix: str = "") -> list[str]:
    """The standard's locked ids of ``tier`` (starting with ``prefix``) that this session may
    run: narrowed by ``--ckit-select`` and ``--ckit-ids`` already at parametrization, so a run
    of a few tests never builds 14,000 items. Tier suites parametrize ``case`` with these."""
    ids = [i for i in load_standard().test_ids(tier) if i.startswith(prefix)]
    globs = config.getoption("ckit_select", default=None)
    if globs:
        ids = [i for i in ids if matches_any(i, globs)]
    listed = _listed_ids(config)
    return ids if listed is None else [i for i in ids if i in listed]


def parametrize_cases(metafunc: pytest.Metafunc, tier: str, prefix: str = "") -> None:
    """``pytest_generate_tests`` of a tier suite whose test takes ``case``."""
    if "case" in metafunc.fixturenames:
        cases = locked_cases(metafunc.config, tier, prefix)
        metafunc.parametrize("case", cases, ids=cases)


def _listed_ids(config: pytest.Config) -> frozenset[str] | None:
    path = config.getoption("ckit_ids", default=None)
    if not path:
        return None
    try:
        return frozenset(Path(path).read_text(encoding="utf-8").split())
    except OSError as exc:
        raise pytest.UsageError(f"--ckit-ids {path}: cannot read ({exc.strerror})") from None


def is_active(config: pytest.Config) -> bool:
    return bool(config.getoption("ckit_vendor", default=None))


def stable_id(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None or "case" not in callspec.params:
        return None
    return str(callspec.id)


def _today(config: pytest.Config) -> dt.date:
    value = config.getoption("ckit_today")
    return dt.date.fromisoformat(value) if value else utc_today()


def build_context(
    vendor_id: str,
    today: dt.date,
    evidence_path: Path | None = None,
    flows: tuple[str, ...] | None = None,
    timeout_s: float | None = None,
) -> KitContext:
    """Load everything a run needs; bad input raises ``KitError`` with a one-line message.

    An unusable device is not an exception here: the context records the problem, tests that
    need the device skip with it, and the deploy tier reports it as its own failure.
    """
    standard = load_standard()
    vendor = load_vendor(vendor_id)
    if flows is not None:
        vendor = dataclasses.replace(vendor, flows=flows)
    skips = load_skip_manifest(vendor.skip_manifest_path)
    try:
        device_info, problem = enable_device(vendor), None
    except DeviceError as error:
        device_info, problem = None, str(error)
    return KitContext(
        standard, vendor, skips, device_info, today, problem, evidence_path=evidence_path,
        timeout_s=timeout_s,
    )


def pytest_configure(config: pytest.Config) -> None:
    if not is_active(config):
        return
    try:
        evidence = config.getoption("ckit_evidence")
        flows = config.getoption("ckit_flows")
        context = build_context(
            config.getoption("ckit_vendor"),
            _today(config),
            Path(evidence) if evidence else None,
            tuple(f for f in flows.split(",") if f) if flows is not None else None,
            config.getoption("ckit_timeout"),
        )
    except KitError as error:
        raise pytest.UsageError(str(error)) from None
    config.stash[CONTEXT_KEY] = context


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    inside_tiers = collection_path == TIERS_DIR or TIERS_DIR in collection_path.parents
    if is_active(config):
        # Vendor mode collects the tier suites only (and the directories leading to them).
        leads_to_tiers = collection_path in TIERS_DIR.parents
        return None if inside_tiers or leads_to_tiers else True
    return True if inside_tiers else None


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not is_active(config):
        return
    _narrow(config, items)
    context = config.stash[CONTEXT_KEY]
    for item in items:
        decided = _decided(context, stable_id(item) or "")
        if decided is not None:
            item.stash[DECISION_KEY] = decided


def _decided(context: KitContext, test_id: str) -> KitDecision | None:
    """What the kit decides of ``test_id`` before it runs: a device problem skips the tests
    that need the device, an entry of the vendor's manifest the tests it matches."""
    if context.device_problem and _needs_device(test_id):
        return DeviceUnusable(context.device_problem)
    decision = context.skips.decide(test_id, context.today)
    if decision.skip and decision.entry is not None:
        return ManifestSkip(decision.entry.describe())
    return None


def _narrow(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep the items ``--ckit-select`` and ``--ckit-ids`` ask for (suites parametrized by
    ``locked_cases`` are narrowed already; this also drops an emptied parametrization's
    placeholder and the tests that are not parametrized from the locked list)."""
    globs = config.getoption("ckit_select")
    listed = _listed_ids(config)
    if not globs and listed is None:
        return
    keep = [item for item in items if _wanted(stable_id(item) or "", globs, listed)]
    if len(keep) != len(items):
        kept = set(map(id, keep))
        config.hook.pytest_deselected(items=[i for i in items if id(i) not in kept])
    items[:] = keep


def _wanted(test_id: str, globs: list[str], listed: frozenset[str] | None) -> bool:
    if globs and not matches_any(test_id, globs):
        return False
    return listed is None or test_id in listed


def _needs_device(test_id: str) -> bool:
    """A tier that checks the device itself (deploy) runs even when the device is unusable."""
    tier = find_tier(test_id)
    return tier is None or tier.needs_device


@pytest.fixture(scope="session")
def ckit(request: pytest.FixtureRequest) -> KitContext:
    context = request.config.stash.get(CONTEXT_KEY, None)
    if context is None:
        pytest.skip("no vendor given: run with --ckit-vendor ID or CKIT_VENDOR=ID")
    return context


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    context = item.config.stash.get(CONTEXT_KEY, None)
    if context is not None:
        context.notes.clear()
    decided = item.stash.get(DECISION_KEY, None)
    if decided is not None:  # before any fixture, as a skip marker would
        raise KitSkip(decided, at_item=True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if stable_id(item) is None:
        return report
    context = item.config.stash.get(CONTEXT_KEY, None)
    verdict = phase_verdict(report, call, context.notes if context is not None else EMPTY)
    if verdict is not None:
        # Where pytest keeps a plugin's facts of a phase (as its own ``wasxfail``): what its
        # report hooks and pytest-xdist's controller read (``report_verdict``).
        setattr(report, VERDICT_ATTRIBUTE, verdict)
    return report


def phase_verdict(report: pytest.TestReport, call: pytest.CallInfo[None],
                  notes: Mapping[str, Any]) -> Verdict | None:
    """The kit's verdict on one phase (``verdict_of`` its exception; None: the phase decided
    nothing, a setup or teardown that passed)."""
    if report.passed:
        return verdict_of(None, notes) if report.when == "call" else None
    raised = call.excinfo.value if call.excinfo is not None else None
    if report.skipped and not isinstance(raised, _SKIPS):
        # An xfail marker's expected failure: pytest reports it skipped, as the kit does.
        raised = pytest.skip.Exception(_skip_reason(report))
    return None if raised is None else verdict_of(raised, notes)


_SKIPS = (pytest.skip.Exception, pytest.xfail.Exception)


@pytest.hookimpl(wrapper=True)
def pytest_report_to_serializable(report: pytest.TestReport) -> Any:
    # pytest-xdist ships reports between processes as plain data: the verdict travels as a dict.
    data = yield
    verdict = report_verdict(report) if isinstance(report, pytest.TestReport) else None
    if isinstance(data, dict) and verdict is not None:
        data[VERDICT_ATTRIBUTE] = {"status": verdict.status.value, "message": verdict.message,
                                   "details": verdict.details}
    return data


@pytest.hookimpl(wrapper=True)
def pytest_report_from_serializable(data: dict[str, Any]) -> Any:
    report = yield
    shipped = getattr(report, VERDICT_ATTRIBUTE, None)
    if isinstance(shipped, dict):
        verdict = Verdict(Status(shipped["status"]), shipped["message"], shipped["details"])
        setattr(report, VERDICT_ATTRIBUTE, verdict)
    return report


def report_verdict(report: pytest.TestReport) -> Verdict | None:
    """The kit's verdict on one phase's report (None: this phase decided nothing)."""
    verdict = getattr(report, VERDICT_ATTRIBUTE, None)
    return verdict if isinstance(verdict, Verdict) else None


#: The fixtures of a kit test the worker may call without pytest's per-test protocol
#: (``request`` is in every test's closure; it sets nothing up).
DIRECT_FIXTURES = frozenset({"case", "ckit", "request"})


def direct_call(item: pytest.Item, context: KitContext | None) -> Callable[[], object] | None:
    """``item``'s test function bound to its case and ``context``, where calling it is all
    pytest's per-test protocol would do (None: run the protocol): a kit test that takes only
    ``case`` and ``ckit``, that the kit did not decide before it runs (``DECISION_KEY``: the
    manifest's or a device problem's skip) and that carries no marker (a vendor's
    ``filterwarnings``...). ``ckit run``'s worker calls it directly; plain pytest
    runs the very same function."""
    if context is None or not isinstance(item, pytest.Function):
        return None
    if set(item.fixturenames) != DIRECT_FIXTURES or DECISION_KEY in item.stash:
        return None
    if any(mark.name != "parametrize" for mark in item.iter_markers()):
        return None
    return functools.partial(item.obj, case=item.callspec.params["case"], ckit=context)


def direct_verdict(call: Callable[[], object], context: KitContext) -> Verdict:
    """Call a ``direct_call`` and decide as the plugin decides on its reports (``verdict_of``).
    Warnings are ignored (pytest would only count them); an interrupt or ``pytest.exit`` goes
    on up, as in pytest."""
    context.notes.clear()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
    except (pytest.exit.Exception, KeyboardInterrupt):
        raise
    except BaseException as exc:  # noqa: BLE001 - pytest's call phase records every other one
        return verdict_of(exc, context.notes)
    return verdict_of(None, context.notes)


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
        return reason[len("Skipped: "):] if reason.startswith("Skipped: ") else reason
    return str(longrepr)
