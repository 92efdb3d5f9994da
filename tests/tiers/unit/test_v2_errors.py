"""Standard v2's error parity: where CPU refuses an OpInfo error input, the device must too."""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from typing import Any

import pytest
import torch
from unit_helpers import plant

from kit.outcomes import SemanticMismatch
from kit.standard import load_standard
from kit.tiers.unit.cases import unit_case
from kit.tiers.unit.checking import execute_case, judge_case
from kit.tiers.unit.config import load_unit_config
from kit.tiers.unit.samples import find_opinfo
from kit.tiers.unit.variants.errors import (
    FAILURE,
    RAISES,
    cpu_only_positions,
    cpu_rejects,
    device_agnostic,
)

STANDARD = load_standard()
LOCKED = set(STANDARD.test_ids("unit"))
OUT_OF_RANGE = "unit/opinfo/gather/float32/error-4"
#: An error input OpInfo gives for every device (an index of the wrong number of dimensions).
WRONG_SHAPE = "unit/opinfo/gather/float32/error-0"


def test_error_inputs_are_locked_only_where_they_reach_any_device() -> None:
    assert OUT_OF_RANGE in LOCKED
    # gather's error-5..7 pass an overlapping out= tensor, which only the front end refuses.
    assert "unit/opinfo/gather/float32/error-5" not in LOCKED
    op = find_opinfo(load_unit_config(STANDARD).op("gather"))
    errors = list(op.error_inputs_func(op, "cpu"))
    assert device_agnostic(errors[4]) and cpu_rejects(op, errors[4])
    assert not device_agnostic(errors[5])
    # OpInfo gives the out-of-range index for CPU alone (CUDA asserts on the device instead):
    # on any other device that test is not applicable (the planted run below checks simnpu).
    assert cpu_only_positions(op) == frozenset({4})


def test_cpu_refusing_passes_and_a_returned_value_fails_as_no_error() -> None:
    case = unit_case(STANDARD, OUT_OF_RANGE)
    assert case.repeat is None  # a refusal is no computation to repeat
    evidence = execute_case("cpu", case)
    judge_case(STANDARD, case, evidence)
    returned = replace(evidence, result=torch.tensor(False), facts={RAISES: False})
    with pytest.raises(SemanticMismatch) as caught:
        judge_case(STANDARD, case, returned)
    assert caught.value.details()["failure"] == FAILURE


#: (simnpu fault, the test that catches it, its status, a test of the same op left alone).
PLANTED = [
    ({"op": "gather", "kind": "swallow_error"}, WRONG_SHAPE, "FAIL_SEMANTIC",
     "unit/opinfo/gather/float32/0"),
    ({"op": "roll", "kind": "abort"}, "unit/opinfo/roll/float32/error-0", "CRASH", None),
]
plant([rule for rule, _, _, _ in PLANTED],
      [t for _, caught, _, control in PLANTED for t in (caught, control) if t] + [OUT_OF_RANGE])


@pytest.mark.slow(seconds=90)
@pytest.mark.skipif(importlib.util.find_spec("simnpu") is None, reason="simnpu not installed")
def test_an_op_returning_a_value_where_cpu_raises_is_caught_on_simnpu(
    planted_run: dict[str, dict[str, Any]],
) -> None:
    records = planted_run
    for _, caught, status, control in PLANTED:
        assert records[caught]["status"] == status, records[caught]["message"]
        if control:
            assert records[control]["status"] == "PASS", records[control]["message"]
    assert records[WRONG_SHAPE]["details"]["failure"] == FAILURE
    cpu_only = records[OUT_OF_RANGE]
    assert cpu_only["status"] == "NOT_APPLICABLE", cpu_only["message"]
    assert cpu_only["details"]["na_reason"] == "cpu-only-error-input"
