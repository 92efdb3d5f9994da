"""The model tier: whole models from several sources, per flow, judged by the kit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kit.applicability import flow_inapplicable, unclaimed_dtype
from kit.outcomes import Inapplicable
from kit.results import NotApplicableReason
from kit.test_ids import TestId
from kit.tiers.interface import Tier
from kit.tiers.models.segments import EAGER, TRAIN

if TYPE_CHECKING:
    from kit.json_shape import RecordDetails
    from kit.judge_context import JudgeContext
    from kit.standard import Standard
    from kit.vendors import VendorProfile


class ModelsTier(Tier):
    name = "models"
    preloads = ("transformers", "kit.tiers.models.cases")

    def generate_ids(self, standard: Standard) -> list[str]:
        from kit.tiers.models.cases import all_test_ids

        return all_test_ids(standard)

    def inapplicable(
        self, standard: Standard, vendor: VendorProfile, test_id: str
    ) -> Inapplicable | None:
        from kit.tiers.models.cases import MODEL_DTYPE, SOURCES, find_case

        case = find_case(standard, test_id)
        found = flow_inapplicable(vendor, case.flow) or unclaimed_dtype(vendor, MODEL_DTYPE)
        if found is not None:
            return found
        source = SOURCES[case.source]
        absent = source.unavailable_reason()
        if absent is not None and source.optional:  # a required source's absence is an ERROR
            return Inapplicable(NotApplicableReason.OPTIONAL_SOURCE_ABSENT, absent)
        return None

    def blame_dtype(self, test_id: str) -> str | None:
        """A model on the device's eager path (its forward or its training step) calls its ops
        there, in the tier's dtype; a program flow runs them in another runtime, which no unit
        test of the device explains."""
        from kit.tiers.models.cases import MODEL_DTYPE

        return MODEL_DTYPE if TestId.split(test_id).last in (EAGER, TRAIN) else None

    def primitives(self, standard: Standard, test_id: str) -> tuple[str, ...]:
        from kit.aten_trace import ops_called
        from kit.tiers.models.cases import SOURCES, find_case
        from kit.tiers.models.flows import call_module

        case = find_case(standard, test_id)
        source = SOURCES[case.source]
        if source.unavailable_reason() is not None:
            return ()
        built = source.build(case)
        if case.training:  # forward, backward and both optimizers' update kernels
            from kit.tiers.models.training import device_training

            return ops_called(lambda: device_training(built, case, "cpu"))
        return ops_called(lambda: call_module(built.module, built.inputs))

    def judge(self, context: JudgeContext, test_id: str, evidence: Any) -> RecordDetails:
        from kit.tiers.models.cases import judge_model_evidence

        return judge_model_evidence(context.standard, test_id, evidence, context.golden)
