"""Standard v2's special values: NaN, infinities, -0.0 and subnormals in the inputs; CPU's
semantics in the tested dtype decide. A kernel that handles them wrongly is caught on a real
device (simnpu) while its ordinary samples pass; the fault-free cpu vendor passes them all."""

from __future__ import annotations

import importlib.util
import math
from typing import Any

import pytest
import torch
from planting_helpers import matching
from unit_helpers import on_clean_cpu, plant

from kit.standard import load_standard
from kit.tiers.unit.cases import unit_case
from kit.tiers.unit.trees import tensor_leaves
from kit.tiers.unit.variants.special import special_values

pytestmark = pytest.mark.slow(seconds=65)

STANDARD = load_standard()
LOCKED = set(STANDARD.test_ids("unit"))


def test_each_special_value_is_in_the_inputs_of_a_special_test() -> None:
    test_id = "unit/opinfo/add/float32/special"
    assert test_id in LOCKED
    inputs = [t for _, t in tensor_leaves(unit_case(STANDARD, test_id).make_inputs("cpu", False))]
    held = torch.cat([t.reshape(-1) for t in inputs]).tolist()
    for value in special_values(torch.float32).tolist():
        if math.isnan(value):
            assert any(math.isnan(v) for v in held)
        elif value == 0.0:
            assert any(v == 0.0 and math.copysign(1, v) < 0 for v in held)  # -0.0
        else:
            assert value in held, value


def test_no_special_test_for_integer_dtypes() -> None:
    assert not [i for i in LOCKED if i.endswith("/special") and "/int" in i]


SPECIAL = on_clean_cpu(["unit/opinfo/*/*/special"])


@pytest.mark.slow(seconds=60)
def test_special_values_pass_on_the_cpu_vendor(clean_cpu_run: dict[str, dict[str, Any]]) -> None:
    records = matching(clean_cpu_run, SPECIAL)
    assert len(records) > 300
    failing = [(i, r["message"]) for i, r in records.items() if r["status"] != "PASS"]
    assert not failing, failing[:5]


AMAX_SPECIAL, AMAX = "unit/opinfo/amax/float32/special", "unit/opinfo/amax/float32/0"
plant([{"op": "amax", "kind": "drop_nan"}], [AMAX_SPECIAL, AMAX])


@pytest.mark.slow(seconds=90)
@pytest.mark.skipif(importlib.util.find_spec("simnpu") is None, reason="simnpu not installed")
def test_a_max_that_drops_nan_is_caught_only_by_the_special_values(
    planted_run: dict[str, dict[str, Any]],
) -> None:
    records = planted_run
    assert records[AMAX_SPECIAL]["status"] == "FAIL_NUMERIC", records[AMAX_SPECIAL]["message"]
    assert records[AMAX]["status"] == "PASS", records[AMAX]["message"]
