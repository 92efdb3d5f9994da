"""What does not apply to a vendor: decided by the kit, from the standard and the profile alone.

Only the kit may end a test NOT_APPLICABLE, and only for one of ``NotApplicable``'s reasons: the
vendor does not claim the test's dtype or flow, or an optional model source is not installed.
``ckit run`` decides this before a test reaches a worker; a worker (which runs vendor code)
that ends a test as skipped or not applicable gets an ERROR instead.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from kit.results import tier_of
from kit.standard import Standard
from kit.vendors import VendorProfile


class NotApplicable(enum.StrEnum):
    """The fixed set of reasons a test may not apply (recorded as ``details.kit_reason``)."""

    UNCLAIMED_DTYPE = "unclaimed-dtype"
    UNCLAIMED_FLOW = "unclaimed-flow"
    OPTIONAL_SOURCE_ABSENT = "optional-source-absent"


@dataclass(frozen=True)
class Inapplicable:
    reason: NotApplicable
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
    return None


def _dtype(vendor: VendorProfile, dtype: str) -> Inapplicable | None:
    if vendor.claims_dtype(dtype):
        return None
    return Inapplicable(
        NotApplicable.UNCLAIMED_DTYPE, f"vendor {vendor.id} does not claim dtype {dtype}"
    )


def _model(standard: Standard, vendor: VendorProfile, test_id: str) -> Inapplicable | None:
    from kit.models import MODEL_DTYPE, SOURCES, find_case

    case = find_case(standard, test_id)
    if case.flow not in vendor.flows:
        return Inapplicable(
            NotApplicable.UNCLAIMED_FLOW, f"vendor {vendor.id} does not claim flow {case.flow}"
        )
    unclaimed = _dtype(vendor, MODEL_DTYPE)
    if unclaimed is not None:
        return unclaimed
    absent = SOURCES[case.source].unavailable_reason()
    if absent is not None:
        return Inapplicable(NotApplicable.OPTIONAL_SOURCE_ABSENT, absent)
    return None
