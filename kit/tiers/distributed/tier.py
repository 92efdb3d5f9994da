"""The distributed tier: the device's collectives across local rank processes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kit.applicability import unclaimed_dtype, unclaimed_process_group
from kit.tiers.distributed.rank_start import RANK_IMPORTS
from kit.tiers.interface import Tier

if TYPE_CHECKING:
    from kit.json_shape import RecordDetails
    from kit.judge_context import JudgeContext
    from kit.outcomes import Inapplicable
    from kit.standard import Standard
    from kit.vendors import VendorProfile


class DistributedTier(Tier):
    name = "distributed"
    # ``distributed/<collective>[-<op>]/<dtype>/...``: the collective and its dtype.
    op_offset = 0
    # What the ranks import: the run's fork server imports it once for its workers, so the ranks
    # forked from a worker do not each pay it; the judge needs none (``warm_up``).
    preloads = RANK_IMPORTS

    def warm_up(self) -> None:
        import kit.tiers.distributed.cases  # noqa: F401

    def generate_ids(self, standard: Standard) -> list[str]:
        from kit.tiers.distributed.ids import locked_ids

        return locked_ids()

    def inapplicable(
        self, standard: Standard, vendor: VendorProfile, test_id: str
    ) -> Inapplicable | None:
        from kit.tiers.distributed.ids import DistributedId

        dtype = DistributedId.of(test_id).dtype
        return unclaimed_process_group(vendor) or unclaimed_dtype(vendor, dtype)

    def judge(self, context: JudgeContext, test_id: str, evidence: Any) -> RecordDetails:
        from kit.tiers.distributed.cases import judge_distributed_evidence

        return judge_distributed_evidence(context.standard, test_id, evidence)
