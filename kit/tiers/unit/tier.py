"""The unit tier: each op x dtype x sample of the standard on the device, judged by the kit."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from kit.applicability import unclaimed_autocast, unclaimed_dtype
from kit.outcomes import Inapplicable
from kit.printable import printable
from kit.results import NotApplicableReason
from kit.tiers.interface import Tier
from kit.tiers.unit.unit_id import TIER, UnitId

if TYPE_CHECKING:
    from kit.json_shape import RecordDetails
    from kit.judge_context import JudgeContext
    from kit.standard import Standard
    from kit.vendors import VendorProfile

#: Rebuilding samples seeds torch's global generators: one orchestrator thread at a time.
_REPRO_LOCK = threading.Lock()


def unit_dtype_of(test_id: str) -> str:
    """``unit/opinfo/add/float32/0`` and ``unit/opspec/sdpa/bfloat16/long`` -> the dtype."""
    return UnitId.of(test_id).dtype


#: Why a CPU-only error input is not tried elsewhere (``locked_ids.CPU_ONLY_ERRORS``).
CPU_ONLY_ERROR_WORDS = ("PyTorch's OpInfo gives this error input for CPU only: another device "
                        "may refuse it asynchronously, with a device-side assert")


def _cpu_only_error(standard: Standard, test_id: str) -> bool:
    from kit.tiers.unit.locked_ids import CPU_ONLY_ERRORS

    return test_id in CPU_ONLY_ERRORS.listed_if_locked(standard)


def _scale_over_budget(standard: Standard, vendor: VendorProfile, test_id: str
                       ) -> Inapplicable | None:
    from kit.tiers.unit.scale_budget import SCALE_RULE, over_budget, scale_power

    if scale_power(UnitId.of(test_id).sample) is None:
        return None
    from kit.tiers.unit.config import load_unit_config

    rules = load_unit_config(standard).coverage.variants
    rule = next((r for r in rules if r.kind == SCALE_RULE), None)
    return None if rule is None else over_budget(test_id, rule.memory_budget_mib, vendor)


class UnitTier(Tier):
    name = TIER
    preloads = (
        "kit.tiers.unit.opinfo_database",
        "kit.tiers.unit.cases",
        "kit.tiers.unit.opinfo_cases",
        "kit.tiers.unit.opspecs",
    )
    op_offset = 1
    checks_failability = True

    def generate_ids(self, standard: Standard) -> list[str]:
        from kit.tiers.unit.cases import all_test_ids

        return all_test_ids(standard)

    def input_digests(self, standard: Standard, test_ids: list[str]) -> dict[str, str]:
        """Per test id, the digest of its inputs on the canonical CPU path: the lock records
        them so that an id can never silently name other inputs."""
        from kit.tiers.unit.canonical_digests import canonical_digests

        return canonical_digests(standard, test_ids)

    def locked_files(self, standard: Standard, test_ids: list[str]) -> dict[str, str]:
        """The locked id sets the standard asks for (``locked_ids``): which tests repeat their
        call (``coverage.repeat``), which draw random numbers (``coverage.random``), which
        optimizer tests and module tests CPU refuses (``optimizers``, ``modules``); decided by
        CPU ops here, in the kit's process, never in a vendor's or at judging time."""
        from kit.tiers.unit.config import load_unit_config
        from kit.tiers.unit.locked_ids import RANDOM_DRAWS, REPEATS

        config = load_unit_config(standard)
        files: dict[str, str] = {}
        if config.coverage.repeat:
            from kit.tiers.unit.repeat_choice import repeating_ids

            files[REPEATS.file] = REPEATS.render(repeating_ids(config, test_ids))
        if config.coverage.random_not_compared:
            from kit.tiers.unit.random_draws import drawing_ids

            files[RANDOM_DRAWS.file] = RANDOM_DRAWS.render(drawing_ids(standard, test_ids))
        if config.optimizers is not None:
            from kit.tiers.unit.locked_ids import OPTIM_REFUSED
            from kit.tiers.unit.optim_cases import refused_ids
            from kit.tiers.unit.optim_ids import OPTIM_PREFIX

            optim = [test_id for test_id in test_ids if test_id.startswith(OPTIM_PREFIX)]
            files[OPTIM_REFUSED.file] = OPTIM_REFUSED.render(refused_ids(standard, optim))
        if config.modules is not None:
            from kit.tiers.unit.locked_ids import MODULE_REFUSED
            from kit.tiers.unit.module_cases import module_unit_case
            from kit.tiers.unit.module_ids import MODULE_PREFIX
            from kit.tiers.unit.refusals import cpu_refused

            modules = [test_id for test_id in test_ids if test_id.startswith(MODULE_PREFIX)]
            refused = cpu_refused(modules, lambda test_id: module_unit_case(config, test_id))
            files[MODULE_REFUSED.file] = MODULE_REFUSED.render(refused)
        from kit.tiers.unit.cpu_only_errors import cpu_only_error_ids, error_parity_ids
        from kit.tiers.unit.locked_ids import CPU_ONLY_ERRORS

        errors = error_parity_ids(test_ids)
        if errors:  # a standard with error-parity tests (v2 on): its list, even an empty one
            files[CPU_ONLY_ERRORS.file] = CPU_ONLY_ERRORS.render(cpu_only_error_ids(config,
                                                                                    errors))
        return files

    def unfailable_ids(self, standard: Standard, test_ids: list[str]) -> list[str]:
        from kit.tiers.unit.vacuity import unfailable_tests

        return list(unfailable_tests(standard, test_ids))

    def inapplicable(
        self, standard: Standard, vendor: VendorProfile, test_id: str
    ) -> Inapplicable | None:
        """A dtype its operands use that the vendor does not claim (``operand_dtypes``), an
        ``autocast`` test in a dtype the vendor claims no autocast in (``autocast_ids``), an
        optimizer test the kit cannot judge (``optim_ids``), a module test CPU refuses
        (``module_ids``), or a ``scale`` test over the memory budget (``scale_budget``)."""
        from kit.tiers.unit.autocast_ids import autocast_dtype
        from kit.tiers.unit.module_ids import MODULE_PREFIX, module_inapplicable
        from kit.tiers.unit.operand_dtypes import operand_dtypes
        from kit.tiers.unit.optim_ids import OPTIM_PREFIX, optim_inapplicable

        for dtype in operand_dtypes(test_id):
            unclaimed = unclaimed_dtype(vendor, dtype)
            if unclaimed is not None:
                return unclaimed
        if test_id.startswith(OPTIM_PREFIX):
            return optim_inapplicable(standard, test_id)
        if test_id.startswith(MODULE_PREFIX):
            return module_inapplicable(standard, test_id)
        lowered = autocast_dtype(test_id)
        if lowered is not None and (unclaimed := unclaimed_autocast(vendor, lowered)):
            return unclaimed
        if vendor.device_type != "cpu" and _cpu_only_error(standard, test_id):
            return Inapplicable(NotApplicableReason.CPU_ONLY_ERROR_INPUT, CPU_ONLY_ERROR_WORDS)
        return _scale_over_budget(standard, vendor, test_id)

    def absent_from_release(self, standard: Standard, test_id: str) -> Inapplicable | None:
        from kit.tiers.unit.release_drift import absent_from_release

        return absent_from_release(standard, test_id)

    def judge(self, context: JudgeContext, test_id: str, evidence: Any) -> RecordDetails:
        from kit.tiers.unit.cases import judge_unit_evidence
        from kit.tiers.unit.evidence import UnitEvidence
        from kit.tiers.unit.release_drift import inputs_changed
        from kit.tiers.unit.taken_inputs import judged_case

        unit_evidence = UnitEvidence.from_tree(evidence)
        # Samples made once: no case rebuilt where the evidence holds the standard's inputs.
        case = judged_case(context.standard, test_id, unit_evidence.inputs)
        # A canary's pass on other inputs than the standard's says so (a failure's record has
        # it from ``failure_details``).
        details = judge_unit_evidence(context.standard, test_id, unit_evidence, case)
        return {**details, **inputs_changed(context.standard, test_id)}

    def blame_dtype(self, test_id: str) -> str | None:
        """An op spec, an optimizer's steps or a module's forward and backward call several
        primitives in its dtype; an OpInfo test is a primitive."""
        from kit.tiers.unit.cases import MODULE_PREFIX, OPSPEC_PREFIX, OPTIM_PREFIX

        composite = test_id.startswith((OPSPEC_PREFIX, OPTIM_PREFIX, MODULE_PREFIX))
        return unit_dtype_of(test_id) if composite else None

    def primitives(self, standard: Standard, test_id: str) -> tuple[str, ...]:
        from kit.aten_trace import ops_called
        from kit.tiers.unit.cases import unit_case

        case = unit_case(standard, test_id)
        inputs = case.make_inputs("cpu", False)  # made before the trace: only the call counts
        return ops_called(lambda: case.call("cpu", False, inputs))

    def failure_details(self, standard: Standard, test_id: str, vendor: str) -> RecordDetails:
        """How to reproduce the failure (``kit.tiers.unit.repro``), rebuilt in the kit's process;
        a rebuild that fails says why instead of failing the run."""
        from kit.tiers.unit.release_drift import inputs_changed
        from kit.tiers.unit.repro import pytest_command, unit_repro

        try:
            with _REPRO_LOCK:
                # A canary's failure on other inputs than the standard's says so (a pass's
                # record has it from the judge).
                return {"repro": unit_repro(standard, test_id, vendor),
                        **inputs_changed(standard, test_id)}
        except Exception as exc:  # noqa: BLE001 - the record stands; only its repro is missing
            return {"repro": {"unavailable": f"{type(exc).__name__}: {printable(str(exc))[:300]}",
                              "pytest": pytest_command(test_id, vendor)}}
