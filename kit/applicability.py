"""What does not apply to a vendor: decided by the kit, from the standard and the profile alone.

Only the kit may end a test NOT_APPLICABLE, and only for one of ``NotApplicableReason``'s: the
vendor does not claim the test's dtype, autocast dtype or flow, a claimed flow's packages are
not installed, or an optional model source is not installed.
``ckit run`` decides this before a test reaches a worker (each tier's ``inapplicable``, asked
through ``kit.tiers.registry.kit_inapplicable``); a worker (which runs vendor code) that ends a
test as skipped or not applicable gets an ERROR instead. This module holds the rules the tiers
share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kit.outcomes import Inapplicable
from kit.results import NotApplicableReason

if TYPE_CHECKING:
    from kit.vendors import VendorProfile


def unclaimed_dtype(vendor: VendorProfile, dtype: str) -> Inapplicable | None:
    """The vendor does not claim ``dtype`` (vendor.yaml ``dtypes``), or None."""
    if vendor.claims_dtype(dtype):
        return None
    return Inapplicable(
        NotApplicableReason.UNCLAIMED_DTYPE, f"vendor {vendor.id} does not claim dtype {dtype}"
    )


def unclaimed_autocast(vendor: VendorProfile, dtype: str) -> Inapplicable | None:
    """The vendor does not claim autocast in ``dtype`` (vendor.yaml ``autocast``), or None."""
    if vendor.claims_autocast(dtype):
        return None
    claimed = ", ".join(vendor.autocast) or "none"
    return Inapplicable(
        NotApplicableReason.UNCLAIMED_AUTOCAST,
        f"vendor {vendor.id} does not claim autocast in {dtype} (claims: {claimed})",
    )


def unclaimed_process_group(vendor: VendorProfile) -> Inapplicable | None:
    """The vendor claims no ``torch.distributed`` backend (vendor.yaml ``process_group_backend``),
    or None."""
    if vendor.process_group_backend is not None:
        return None
    return Inapplicable(
        NotApplicableReason.UNCLAIMED_PROCESS_GROUP,
        f"vendor {vendor.id} claims no process-group backend",
    )


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


def unclaimed_compile_backend(vendor: VendorProfile) -> Inapplicable | None:
    """The vendor claims no ``torch.compile`` backend (vendor.yaml ``compile_backends``), or
    None."""
    if vendor.compile_backends:
        return None
    return Inapplicable(
        NotApplicableReason.UNCLAIMED_COMPILE_BACKEND,
        f"vendor {vendor.id} claims no torch.compile backend",
    )
