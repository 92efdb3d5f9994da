"""The unit tier: OpInfo samples and YAML op specs, each run on the vendor device.

``all_test_ids`` generates the tier's stable ids and ``input_digests`` what each names
(``ckit standard lock`` writes both to the standard's locked list); ``run_unit_case`` runs one
of them. Collection never imports this package's heavy parts: the tier suites read the locked
list.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from kit.context import KitContext
from kit.errors import InputError
from kit.execution import run_split
from kit.outcomes import ResultMismatch, SemanticMismatch
from kit.results import DISPATCH_KEY
from kit.standard import Standard
from kit.tiers.unit.autocast_ids import autocast_dtype
from kit.tiers.unit.config import Attribution, UnitConfig, load_unit_config
from kit.tiers.unit.evidence import UnitEvidence
from kit.tiers.unit.module_ids import MODULE_PREFIX
from kit.tiers.unit.optim_ids import OPTIM_PREFIX
from kit.tiers.unit.unit_id import OPINFO_PREFIXES, SWEEP_SOURCE, UnitId

if TYPE_CHECKING:
    from kit.json_shape import RecordDetails
    from kit.tiers.unit.checking import UnitCase

OPINFO_PREFIX = "unit/opinfo/"
SWEEP_PREFIX = f"unit/{SWEEP_SOURCE}/"
OPSPEC_PREFIX = "unit/opspec/"


def all_test_ids(standard: Standard) -> list[str]:
    """Every unit test id of ``standard``, sorted (imports OpInfo's op_db: seconds)."""
    from kit.tiers.unit.module_cases import module_test_ids
    from kit.tiers.unit.opinfo_cases import opinfo_test_ids
    from kit.tiers.unit.opspecs import opspec_test_ids
    from kit.tiers.unit.optim_cases import optim_test_ids

    config = load_unit_config(standard)
    ids = (opinfo_test_ids(config) + opspec_test_ids(config) + optim_test_ids(config)
           + module_test_ids(config))
    return sorted(ids)


def unit_case(standard: Standard, test_id: str) -> UnitCase:
    """The inputs and call of one unit test (imports OpInfo for OpInfo ids), repeating its call
    where the standard's locked repeat file says so."""
    case = unit_case_called_once(standard, test_id)
    if not test_id.startswith(OPINFO_PREFIX):
        return case
    return repeating(standard, load_unit_config(standard), test_id, case)


def unit_case_called_once(standard: Standard, test_id: str) -> UnitCase:
    """The inputs and call of one unit test, without repeat calls: what its input digest and
    vacuity read when the standard is locked, before its repeat file exists."""
    config = load_unit_config(standard)
    if test_id.startswith(OPINFO_PREFIXES):
        from kit.tiers.unit.opinfo_cases import opinfo_unit_case

        return opinfo_unit_case(config, test_id)
    if test_id.startswith(OPSPEC_PREFIX):
        from kit.tiers.unit.opspecs import opspec_unit_case

        return opspec_unit_case(config, test_id)
    if test_id.startswith(OPTIM_PREFIX):
        from kit.tiers.unit.optim_cases import optim_unit_case

        return optim_unit_case(config, test_id)
    if test_id.startswith(MODULE_PREFIX):
        from kit.tiers.unit.module_cases import module_unit_case

        return module_unit_case(config, test_id)
    raise InputError(f"not a unit test id: {test_id!r}")


def repeating(standard: Standard, config: UnitConfig, test_id: str, case: UnitCase
              ) -> UnitCase:
    """The OpInfo case repeating its call where the standard asks for it (``coverage.repeat``):
    one sample per (op, dtype), as the standard's locked file says (``locked_ids.REPEATS``)."""
    if not config.coverage.repeat or not case.repeatable or case.repeat is not None:
        return case
    from kit.tiers.unit.locked_ids import REPEATS
    from kit.tiers.unit.repeat import Repeat

    if not REPEATS.holds(standard, test_id):
        return case
    bitwise = UnitId.of(test_id).op not in config.coverage.nondeterministic
    return replace(case, repeat=Repeat(bitwise=bitwise))


def run_unit_case(ckit: KitContext, test_id: str) -> None:
    """Run one unit test; raises what the plugin classifies (NumericMismatch, skips, ...).

    Under ``ckit run`` only the device half runs here (``kit.execution``).
    """
    case = unit_case(ckit.standard, test_id)
    ckit.require_dtype(case.dtype)
    lowered = autocast_dtype(test_id)
    if lowered is not None:  # plain pytest: ``ckit run`` decided it before (``UnitTier``)
        ckit.require_autocast(lowered)
    attribution = load_unit_config(ckit.standard).attribution
    details = run_split(
        ckit.evidence_path,
        lambda: execute_attributed(ckit, case, attribution).to_tree(),
        lambda tree: judge_unit_evidence(ckit.standard, test_id, UnitEvidence.from_tree(tree)),
    )
    ckit.notes.update(details or {})


def execute_attributed(ckit: KitContext, case: UnitCase, attribution: Attribution | None
                       ) -> UnitEvidence:
    """The device half; where the standard asks (``attribution``), where its ops ran goes into
    the record as ``details.dispatch`` whatever the verdict, and a required op that went
    through the backend's fallback fails the test as ``cpu-fallback``."""
    from kit.attribution.recorder import DispatchLog, decomposed_of
    from kit.tiers.unit.checking import execute_case

    if attribution is None:
        return execute_case(ckit.device, case)
    log = DispatchLog(ckit.device)
    try:
        evidence = execute_case(ckit.device, case, log)
    finally:
        dispatch = log.dispatch(decomposed_of(case.aten_ops, log.seen))
        ckit.notes[DISPATCH_KEY] = dispatch.to_json()
    fell_back = sorted(set(dispatch.fallback) & set(attribution.native_required))
    if fell_back:
        raise SemanticMismatch(
            f"{', '.join(fell_back)} ran through the backend's fallback, not a kernel of the "
            "device's own: the standard requires it natively",
            failure="cpu-fallback",
            ops=fell_back,
        )
    # The list travels with the evidence too: the judge compares it with its own CPU trace.
    return replace(evidence, dispatch=dispatch.to_json())


def judge_unit_evidence(standard: Standard, test_id: str, evidence: UnitEvidence,
                        case: UnitCase | None = None) -> RecordDetails:
    """Judge a device's evidence for ``test_id``; returns the figures a passing record keeps.
    ``case`` where the judge built it on the evidence's inputs (``taken_inputs``), else the
    case is rebuilt here."""
    from kit.outcomes import numerics_details
    from kit.tiers.unit.checking import judge_case
    from kit.tiers.unit.duplicates import details_of
    if case is None:
        case = unit_case(standard, test_id)
    claimed = None
    if load_unit_config(standard).attribution is not None:
        claimed = claimed_dispatch(evidence)
    details = numerics_details(judge_case(standard, case, evidence,
                                          draws_random=draws_random(standard, test_id)))
    details.update(details_of(case.comparison.duplicates))
    if claimed is not None:
        details.update(dispatch_check(case, claimed))
    return details


def claimed_dispatch(evidence: UnitEvidence) -> Mapping[str, list[str]]:
    """The ``details.dispatch`` the device's evidence holds (``execute_attributed``); a
    ``ResultMismatch`` where it is absent or malformed."""
    from kit.attribution.dispatch import dispatch_places
    places = dispatch_places(evidence.dispatch)
    if places is None:
        raise ResultMismatch("the device evidence does not hold the call's op list "
                             "(details.dispatch), which this standard's attribution requires")
    return places


def dispatch_check(case: UnitCase,
                   claimed: Mapping[str, list[str]]) -> dict[str, dict[str, list[str]]]:
    """``details.dispatch_check`` where the device's list and the ops the same call reaches on
    CPU disagree (``kit.attribution.check``); empty where they agree."""
    from kit.attribution.check import DISPATCH_CHECK_KEY, compare, cpu_dispatched
    inputs = case.make_inputs("cpu", False)
    reached = cpu_dispatched(lambda: case.call("cpu", False, inputs))
    found = compare(claimed, reached, case.aten_ops).to_json()
    return {DISPATCH_CHECK_KEY: found} if found else {}


def draws_random(standard: Standard, test_id: str) -> bool:
    """Whether ``test_id``'s values go uncompared because its call draws random numbers: the
    standard compares none such (``coverage.random``) and its locked file lists it
    (``locked_ids.RANDOM_DRAWS``, decided at lock time: the judge watches no call)."""
    if not load_unit_config(standard).coverage.random_not_compared:
        return False
    from kit.tiers.unit.locked_ids import RANDOM_DRAWS

    return RANDOM_DRAWS.holds(standard, test_id)
