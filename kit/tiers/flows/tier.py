"""The flows tier: op specs and exportable OpInfo samples through each program flow."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kit.applicability import flow_inapplicable, unclaimed_dtype
from kit.outcomes import Inapplicable
from kit.tiers.interface import Tier

if TYPE_CHECKING:
    from kit.json_shape import RecordDetails
    from kit.judge_context import JudgeContext
    from kit.standard import Standard
    from kit.vendors import VendorProfile



class FlowsTier(Tier):
    name = "flows"
    # The flows' runtimes (ExecuTorch, ONNX Runtime) load in ``warm_up``, in the worker.
    # ``torch.export`` traces with Dynamo: imported once, in the fork server, as the database
    # no longer imports it (``kit.tiers.unit.opinfo_database``).
    preloads = ("kit.tiers.unit.opinfo_database", "torch._dynamo", "kit.tiers.flows.subjects",
                "kit.tiers.unit.opinfo_cases")
    op_offset = 2

    def generate_ids(self, standard: Standard) -> list[str]:
        from kit.tiers.flows.cases import all_test_ids

        return all_test_ids(standard)

    def inapplicable(
        self, standard: Standard, vendor: VendorProfile, test_id: str
    ) -> Inapplicable | None:
        from kit.tiers.flows.cases import parse_flow_id
        from kit.tiers.unit.tier import unit_dtype_of

        flow, unit_id = parse_flow_id(test_id)
        return flow_inapplicable(vendor, flow) or unclaimed_dtype(vendor, unit_dtype_of(unit_id))

    def absent_from_release(self, standard: Standard, test_id: str) -> Inapplicable | None:
        """A flows test's subject is a unit test: absent where that is (a canary's run)."""
        from kit.tiers.flows.cases import parse_flow_id
        from kit.tiers.unit.release_drift import absent_from_release

        return absent_from_release(standard, parse_flow_id(test_id)[1])

    def warm_up(self) -> None:
        # A flow whose packages are absent is NOT_APPLICABLE (decided by the kit), not a crash.
        from kit.flows import flow_names, get_flow

        for name in flow_names():
            get_flow(name).unavailable_reason()
        super().warm_up()
        import kit.tiers.unit.opspecs  # noqa: F401

    def judge(self, context: JudgeContext, test_id: str, evidence: Any) -> RecordDetails:
        from kit.tiers.flows.cases import judge_flow_evidence

        return judge_flow_evidence(context.standard, test_id, evidence, context.golden)
