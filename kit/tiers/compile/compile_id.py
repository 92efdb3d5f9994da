"""A compile test id: ``compile/<unit id without "unit/">`` (light: no torch).

``compile/opinfo/add/float32/0`` compiles the call of the unit test ``unit/opinfo/add/float32/0``
with each backend the vendor claims: the backend is the vendor's (its profile's
``compile_backends``), never part of the id, so one locked list serves every vendor.
"""

from __future__ import annotations

from kit.errors import InputError
from kit.test_ids import TestId
from kit.tiers.unit.unit_id import TIER as UNIT_TIER
from kit.tiers.unit.unit_id import UnitId

TIER = "compile"


def compile_test_id(unit_id: str) -> str:
    """``compile/opinfo/add/float32/0`` for ``unit/opinfo/add/float32/0``."""
    return str(TestId(TIER, TestId.parse(unit_id, (UNIT_TIER,)).segments))


def unit_id_of(test_id: str) -> str:
    """The unit test whose call a compile test compiles; ``InputError`` for no compile id."""
    parsed = TestId.read(test_id, (TIER,))
    if parsed is None:
        raise InputError(f"not a compile test id: {test_id!r}")
    unit_id = str(TestId(UNIT_TIER, parsed.segments))
    UnitId.of(unit_id)  # four segments: source, op, dtype, sample
    return unit_id
