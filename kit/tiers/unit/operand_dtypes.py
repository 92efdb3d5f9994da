"""Which dtypes a unit test's operands use, read from its id alone (light: no torch).

Most tests use one dtype, the id's dtype segment. A ``promotion`` test also passes a tensor of
another dtype, named by its label (``unit/opinfo/add/float32/promotion-int32``,
``.../promotion-float64_0d``): the test applies only to a vendor that claims every dtype its
operands use (the dtype segment is the first operand's). Python scalars use no dtype.
"""

from __future__ import annotations

from kit.tiers.unit.dtypes import UNIT_DTYPES

#: The label suffix of a 0-dim other operand (``float64_0d``).
ZERO_DIM_SUFFIX = "_0d"
#: The rule whose labels may name a dtype.
PROMOTION_RULE = "promotion"
_SEPARATOR = "-"


def other_dtype_of_label(label: str) -> str | None:
    """The dtype a promotion label names (``float64_0d`` -> ``float64``), or None (``int``)."""
    name = label.removesuffix(ZERO_DIM_SUFFIX)
    return name if name in UNIT_DTYPES else None


def operand_dtypes(test_id: str) -> tuple[str, ...]:
    """The id's dtype segment, then any other dtype its last segment names."""
    parts = test_id.split("/")
    dtypes = [parts[3]]
    rule, _, label = parts[-1].partition(_SEPARATOR)
    other = other_dtype_of_label(label) if rule == PROMOTION_RULE and len(parts) == 5 else None
    if other is not None and other not in dtypes:
        dtypes.append(other)
    return tuple(dtypes)
