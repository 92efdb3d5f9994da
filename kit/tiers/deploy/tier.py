"""The deploy tier: is the vendor stack installed and usable, before any op is judged?"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kit.tiers.interface import Tier

if TYPE_CHECKING:
    from kit.json_shape import RecordDetails
    from kit.judge_context import JudgeContext
    from kit.standard import Standard


class DeployTier(Tier):
    name = "deploy"
    # It checks the device itself (``deploy/device-visible``): it runs where the device is broken.
    needs_device = False
    # Optional in a complete run: it runs in the vendor's reference container (--in-container).
    in_complete_run = False

    def judged_apart(self, test_id: str) -> bool:
        # The environment checks can only run where the vendor's modules are; the checks that
        # compute are judged by the kit.
        from kit.tiers.deploy.cases import JUDGED_APART

        return test_id in JUDGED_APART

    def generate_ids(self, standard: Standard) -> list[str]:
        from kit.tiers.deploy.cases import all_test_ids

        return all_test_ids(standard)

    def judge(self, context: JudgeContext, test_id: str, evidence: Any) -> RecordDetails:
        from kit.tiers.deploy.cases import judge_deploy_evidence

        return judge_deploy_evidence(context.standard, test_id, evidence)
