"""The compile tier: the unit tier's call of an op, or a models tier's model (its forward, its
training step), through ``torch.compile`` with each backend the vendor claims, judged like the
eager call (``kit.tiers.compile.cases``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kit.applicability import unclaimed_compile_backend, unclaimed_dtype
from kit.test_ids import TestId
from kit.tiers.compile.compile_id import MODELS_TIER, TIER
from kit.tiers.interface import Tier

if TYPE_CHECKING:
    from kit.json_shape import RecordDetails
    from kit.judge_context import JudgeContext
    from kit.outcomes import Inapplicable
    from kit.standard import Standard
    from kit.vendors import VendorProfile


class CompileTier(Tier):
    name = TIER
    #: ``torch._inductor`` (and through it ``torch._dynamo``, about 2 s) once, in the fork server
    #: before any worker: the database is built without it (``kit.tiers.unit.opinfo_database``),
    #: and a test's compile limit is for compiling, not for importing the compiler.
    preloads = (
        "kit.tiers.unit.opinfo_database",
        "torch._inductor",
        "kit.tiers.unit.cases",
        "kit.tiers.unit.opinfo_cases",
        "kit.tiers.compile.cases",
        "transformers",
        "kit.tiers.models.cases",
        "kit.tiers.compile.compiled_models",
    )
    #: ``compile/opinfo/<op>/<dtype>/<sample>``; a compiled model's id names no op
    #: (``op_and_dtype``).
    op_offset = 1

    def generate_ids(self, standard: Standard) -> list[str]:
        from kit.tiers.compile.cases import all_test_ids

        return all_test_ids(standard)

    def inapplicable(
        self, standard: Standard, vendor: VendorProfile, test_id: str
    ) -> Inapplicable | None:
        """No backend claimed; else where the compiled test is (a model's: an unclaimed
        dtype, an absent optional source)."""
        from kit.tiers.compile.compile_id import model_id_of, unit_id_of
        from kit.tiers.models.tier import ModelsTier
        from kit.tiers.unit.unit_id import UnitId

        unclaimed = unclaimed_compile_backend(vendor)
        if unclaimed is not None:
            return unclaimed
        model_id = model_id_of(test_id)
        if model_id is not None:
            return ModelsTier().inapplicable(standard, vendor, model_id)
        return unclaimed_dtype(vendor, UnitId.of(unit_id_of(test_id)).dtype)

    def absent_from_release(self, standard: Standard, test_id: str) -> Inapplicable | None:
        """A compile test's call is a unit test's: absent where that is (a canary's run); a
        model is built from its config under every release."""
        from kit.tiers.compile.compile_id import model_id_of, unit_id_of
        from kit.tiers.unit.release_drift import absent_from_release

        if model_id_of(test_id) is not None:
            return None
        return absent_from_release(standard, unit_id_of(test_id))

    def op_and_dtype(self, test_id: str) -> tuple[str, str] | None:
        return None if _names_a_model(test_id) else super().op_and_dtype(test_id)

    def op_group(self, test_id: str) -> str | None:
        return None if _names_a_model(test_id) else super().op_group(test_id)

    def judge(self, context: JudgeContext, test_id: str, evidence: Any) -> RecordDetails:
        from kit.tiers.compile.cases import judge_compiled

        return judge_compiled(context.standard, test_id, evidence)


def _names_a_model(test_id: str) -> bool:
    """``compile/models/...``: a compiled model, whose id names no op (read without raising:
    reports ask of any id)."""
    parsed = TestId.read(test_id, (TIER,))
    return parsed is not None and parsed.segments[0] == MODELS_TIER
