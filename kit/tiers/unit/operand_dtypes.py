"""Which dtypes a unit test's operands use, read from its id alone (light: no torch).

Most tests use one dtype, the id's dtype segment. A ``promotion`` test also passes a tensor of
another dtype, named by its label (``unit/opinfo/add/float32/promotion-int32``,
``.../promotion-float64_0d``): the test applies only to a vendor that claims every dtype its
operands use (the dtype segment is the first operand's). Python scalars use no dtype.
"""

from __future__ import annotations

from kit.tiers.unit.dtypes import UNIT_DTYPES
from kit.tiers.unit.unit_id import UnitId

#: The label suffix of a 0-dim other operand (``float64_0d``).
ZERO_DIM_SUFFIX = "_0d"
#: The rule whose labels may name a dtype.
PROMOTION_RULE = "promotion"


def other_dtype_of_label(label: str) -> str | None:
    """The dtype a promotion label names (``float64_0d`` -> ``float64``), or None (``int``)."""
    name = label.removesuffix(ZERO_DIM_SUFFIX)
    return name if name in UNIT_DTYPES else None


def operand_dtypes(test_id: str) -> tuple[str, ...]:
    """The id's dtype segment, then any other dtype its last segment names."""
    unit_id = UnitId.of(test_id)
    dtypes = [unit_id.dtype]
    rule, label = unit_id.variant()
    other = other_dtype_of_label(label) if rule == PROMOTION_RULE else None
    if other is not None and other not in dtypes:
        dtypes.append(other)
    return tuple(dtypes)
