"""A compile test id: ``compile/`` before the id of the test it compiles (light: no torch).

Two kinds, told apart here alone:

- ``compile/opinfo/add/float32/0`` compiles the call of the unit test
  ``unit/opinfo/add/float32/0`` (the unit id without ``unit/``);
- ``compile/models/hf/bert/eager`` and ``compile/models/hf/bert/train`` compile the model of
  the models test ``models/hf/bert/eager`` (its forward) and ``models/hf/bert/train`` (its
  training step): the models id whole.

Each is compiled with each backend the vendor claims: the backend is the vendor's (its
profile's ``compile_backends``), never part of the id, so one locked list serves every vendor.
"""

from __future__ import annotations

from kit.errors import InputError
from kit.test_ids import TestId
from kit.tiers.models.segments import EAGER, TRAIN
from kit.tiers.unit.unit_id import TIER as UNIT_TIER
from kit.tiers.unit.unit_id import UnitId

TIER = "compile"
#: The models tier's name: the first segment of a compiled model's id after ``compile/``.
MODELS_TIER = "models"
#: The models tests a compile test compiles: a model's forward and its training step.
COMPILED_MODEL_SEGMENTS = (EAGER, TRAIN)


def compile_test_id(compiled_id: str) -> str:
    """``compile/opinfo/add/float32/0`` for ``unit/opinfo/add/float32/0``,
    ``compile/models/hf/bert/eager`` for ``models/hf/bert/eager``."""
    parsed = TestId.parse(compiled_id, (UNIT_TIER, MODELS_TIER))
    if parsed.tier == MODELS_TIER:
        return str(TestId(TIER, (MODELS_TIER, *parsed.segments)))
    return str(TestId(TIER, parsed.segments))


def model_id_of(test_id: str) -> str | None:
    """The models test a compile test compiles (``models/hf/bert/eager``); None for a unit
    test's call; ``InputError`` for no compile id."""
    parsed = _parsed(test_id)
    if parsed.segments[0] != MODELS_TIER:
        return None
    model = TestId(MODELS_TIER, parsed.segments[1:])
    if len(model.segments) != 3 or model.last not in COMPILED_MODEL_SEGMENTS:
        raise InputError(f"not a compiled model's id: {test_id!r} (expected "
                         f"compile/models/<source>/<model>/{'|'.join(COMPILED_MODEL_SEGMENTS)})")
    return str(model)


def unit_id_of(test_id: str) -> str:
    """The unit test whose call a compile test compiles; ``InputError`` for no compile id of
    an op."""
    parsed = _parsed(test_id)
    unit_id = str(TestId(UNIT_TIER, parsed.segments))
    if parsed.segments[0] == MODELS_TIER:
        raise InputError(f"{test_id!r} compiles a model, not a unit test's call")
    UnitId.of(unit_id)  # four segments: source, op, dtype, sample
    return unit_id


def _parsed(test_id: str) -> TestId:
    parsed = TestId.read(test_id, (TIER,))
    if parsed is None:
        raise InputError(f"not a compile test id: {test_id!r}")
    return parsed
