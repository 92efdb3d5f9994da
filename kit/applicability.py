"""What does not apply to a vendor: decided by the kit, from the standard and the profile alone.

Only the kit may end a test NOT_APPLICABLE, and only for one of ``NotApplicableReason``'s: the
vendor does not claim the test's dtype or flow, a claimed flow's packages are not installed, or an
optional model source is not installed.
``ckit run`` decides this before a test reaches a worker; a worker (which runs vendor code)
that ends a test as skipped or not applicable gets an ERROR instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from kit.results import NotApplicableReason, tier_of
from kit.standard import Standard
from kit.vendors import VendorProfile


@dataclass(frozen=True)
class Inapplicable:
    reason: NotApplicableReason
    #: The reason in words, for the record's message.
    words: str


def unit_dtype_of(test_id: str) -> str:
    """``unit/opinfo/add/float32/0`` and ``unit/opspec/sdpa/bfloat16/long`` -> the dtype."""
    return test_id.split("/")[3]


def kit_inapplicable(
    standard: Standard, vendor: VendorProfile, test_id: str
) -> Inapplicable | None:
    """Why ``test_id`` does not apply to ``vendor``, or None when it must run."""
    tier = tier_of(test_id)
    if tier == "unit":
        return _dtype(vendor, unit_dtype_of(test_id))
    if tier == "models":
        return _model(standard, vendor, test_id)
    if tier == "flows":
        from kit.tiers.flows import parse_flow_id

        flow, unit_id = parse_flow_id(test_id)
        return flow_inapplicable(vendor, flow) or _dtype(vendor, unit_dtype_of(unit_id))
    return None


def flow_inapplicable(vendor: VendorProfile, flow: str) -> Inapplicable | None:
    """Why ``flow`` does not apply: the vendor does not claim it, or its packages are absent."""
    if flow not in vendor.flows:
        words = f"vendor {vendor.id} does not claim flow {flow}"
        return Inapplicable(NotApplicableReason.UNCLAIMED_FLOW, words)
    from kit.flows import get_flow

    absent = get_flow(flow).unavailable_reason()
    if absent is not None:
        return Inapplicable(NotApplicableReason.FLOW_NOT_INSTALLED, absent)
    return None


def _dtype(vendor: VendorProfile, dtype: str) -> Inapplicable | None:
    if vendor.claims_dtype(dtype):
        return None
    return Inapplicable(
        NotApplicableReason.UNCLAIMED_DTYPE, f"vendor {vendor.id} does not claim dtype {dtype}"
    )


def _model(standard: Standard, vendor: VendorProfile, test_id: str) -> Inapplicable | None:
    from kit.tiers.models import MODEL_DTYPE, SOURCES, find_case

    case = find_case(standard, test_id)
    unusable = flow_inapplicable(vendor, case.flow)
    if unusable is not None:
        return unusable
    unclaimed = _dtype(vendor, MODEL_DTYPE)
    if unclaimed is not None:
        return unclaimed
    source = SOURCES[case.source]
    absent = source.unavailable_reason()
    if absent is not None and source.optional:  # a required source's absence is an ERROR
        return Inapplicable(NotApplicableReason.OPTIONAL_SOURCE_ABSENT, absent)
    return None
