"""The model tier: whole models from several sources, per flow, judged by the kit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kit.applicability import Inapplicable, flow_inapplicable, unclaimed_dtype
from kit.results import NotApplicableReason
from kit.tiers.interface import Tier

if TYPE_CHECKING:
    from kit.judge_context import JudgeContext
    from kit.standard import Standard
    from kit.vendors import VendorProfile


class ModelsTier(Tier):
    name = "models"

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

    def warm_up(self) -> None:
        import transformers  # noqa: F401

        import kit.tiers.models.cases  # noqa: F401

    def judge(self, context: JudgeContext, test_id: str, evidence: Any) -> dict[str, Any]:
        from kit.tiers.models.cases import judge_model_evidence

        return judge_model_evidence(context.standard, test_id, evidence, context.golden)
