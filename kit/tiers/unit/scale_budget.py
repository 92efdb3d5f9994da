"""Whether a ``scale`` test fits the memory budget: decided by the kit from its id, the
standard's budget and the vendor's declared device memory (light: no torch).

A scale id names its size (``unit/opinfo/sum/float32/scale-2p24``: past 2^24 elements). Its
footprint is estimated, before anything runs, as ``elements * bytes * SCALE_COPIES``, where
``bytes`` is 8 for floating dtypes (the float64 reference) and the dtype's size otherwise, and
``SCALE_COPIES`` covers the device input and result, their CPU copies in the evidence file, the
judge's rebuilt inputs and its references. A test over the budget (the standard's
``memory_budget_mib``, lowered by the vendor's ``device_memory_mib``) is NOT_APPLICABLE with
reason ``exceeds-memory-budget``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kit.outcomes import Inapplicable
from kit.results import NotApplicableReason
from kit.tiers.unit.unit_id import UnitId

if TYPE_CHECKING:
    from kit.vendors import VendorProfile

SCALE_RULE = "scale"
_SEGMENT = re.compile(r"scale-2p([0-9]{1,2})\Z")
SCALE_COPIES = 8
_BYTES = {"float64": 8, "float32": 8, "bfloat16": 8, "float16": 8, "int64": 8, "int32": 4,
          "bool": 1}
MIB = 1 << 20


def scale_elements(power: int) -> int:
    """The elements of a ``scale-2p<power>`` input: past 2^power by a sixteenth (so a kernel
    dropping what lies past 2^power visibly changes a sum), plus 3 (no multiple of a vector
    width)."""
    return (1 << power) + (1 << (power - 4)) + 3


def scale_power(segment: str) -> int | None:
    """``scale-2p24`` -> 24; None for any other segment."""
    match = _SEGMENT.match(segment)
    return int(match.group(1)) if match else None


def footprint_bytes(dtype: str, power: int) -> int:
    return scale_elements(power) * _BYTES[dtype] * SCALE_COPIES


def over_budget(test_id: str, budget_mib: int, vendor: VendorProfile) -> Inapplicable | None:
    """``exceeds-memory-budget`` for a scale id whose footprint exceeds the budget, or None."""
    unit_id = UnitId.of(test_id)
    power = scale_power(unit_id.sample)
    if power is None:
        return None
    budget = budget_mib if vendor.device_memory_mib is None else min(
        budget_mib, vendor.device_memory_mib)
    needed = footprint_bytes(unit_id.dtype, power)
    if needed <= budget * MIB:
        return None
    return Inapplicable(
        NotApplicableReason.EXCEEDS_MEMORY_BUDGET,
        f"needs about {needed // MIB} MiB, over the memory budget of {budget} MiB "
        "(the standard's memory_budget_mib, or the vendor's device_memory_mib)",
    )
