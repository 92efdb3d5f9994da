"""The compile tier: the unit tier's call of an op through ``torch.compile`` with each backend
the vendor claims, judged like the eager call (``kit.tiers.compile.cases``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kit.applicability import unclaimed_compile_backend, unclaimed_dtype
from kit.tiers.compile.compile_id import TIER
from kit.tiers.interface import Tier

if TYPE_CHECKING:
    from kit.json_shape import RecordDetails
    from kit.judge_context import JudgeContext
    from kit.outcomes import Inapplicable
    from kit.standard import Standard
    from kit.vendors import VendorProfile


class CompileTier(Tier):
    name = TIER
    preloads = (
        "torch.testing._internal.common_methods_invocations",
        "kit.tiers.unit.cases",
        "kit.tiers.unit.opinfo_cases",
        "kit.tiers.compile.cases",
    )
    #: ``compile/opinfo/<op>/<dtype>/<sample>``.
    op_offset = 1

    def generate_ids(self, standard: Standard) -> list[str]:
        from kit.tiers.compile.cases import all_test_ids

        return all_test_ids(standard)

    def inapplicable(
        self, standard: Standard, vendor: VendorProfile, test_id: str
    ) -> Inapplicable | None:
        from kit.tiers.compile.compile_id import unit_id_of
        from kit.tiers.unit.unit_id import UnitId

        dtype = UnitId.of(unit_id_of(test_id)).dtype
        return unclaimed_compile_backend(vendor) or unclaimed_dtype(vendor, dtype)

    def absent_from_release(self, standard: Standard, test_id: str) -> Inapplicable | None:
        """A compile test's call is a unit test's: absent where that is (a canary's run)."""
        from kit.tiers.compile.compile_id import unit_id_of
        from kit.tiers.unit.release_drift import absent_from_release

        return absent_from_release(standard, unit_id_of(test_id))

    def judge(self, context: JudgeContext, test_id: str, evidence: Any) -> RecordDetails:
        from kit.tiers.compile.cases import judge_compiled

        return judge_compiled(context.standard, test_id, evidence)
