"""Standard v2's ``promotion`` variant: scalars and tensors of other dtypes as the other
operand; the result dtype must be CPU's, and a test applies only where every operand dtype is
claimed."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

import pytest
from unit_helpers import plant

from kit import paths
from kit.results import NotApplicableReason
from kit.standard import load_standard
from kit.tiers.unit.operand_dtypes import operand_dtypes
from kit.tiers.unit.tier import UnitTier
from kit.vendors import load_vendor

STANDARD = load_standard()
LOCKED = set(STANDARD.test_ids("unit"))
SCALAR_ID = "unit/opinfo/add/int64/promotion-float"


def test_promotion_ids_are_locked_for_scalars_tensors_and_zero_dim_operands() -> None:
    for label in ("bool", "int", "float", "int32", "float16", "float64_0d"):
        assert f"unit/opinfo/add/float32/promotion-{label}" in LOCKED
    # CPU refuses a float with a bitwise op: no such test.
    assert "unit/opinfo/bitwise_and/int64/promotion-float" not in LOCKED
    assert "unit/opinfo/bitwise_and/int64/promotion-int" in LOCKED


def test_operand_dtypes_name_the_other_tensor_dtype_only() -> None:
    assert operand_dtypes("unit/opinfo/add/float32/promotion-float64_0d") == (
        "float32", "float64")
    assert operand_dtypes("unit/opinfo/add/float32/promotion-int32") == ("float32", "int32")
    assert operand_dtypes("unit/opinfo/add/float32/promotion-float") == ("float32",)
    assert operand_dtypes("unit/opinfo/add/float32/3") == ("float32",)


def test_a_test_using_an_unclaimed_dtype_is_not_applicable(tmp_path: Path) -> None:
    vendor_dir = tmp_path / "noint32"
    shutil.copytree(paths.vendors_dir() / "cpu", vendor_dir)
    profile = vendor_dir / "vendor.yaml"
    text = profile.read_text().replace("id: cpu", "id: noint32")
    profile.write_text(text.replace(", int32,", ","))
    vendor = load_vendor(vendor_dir)
    tier = UnitTier()
    found = tier.inapplicable(STANDARD, vendor, "unit/opinfo/add/float32/promotion-int32")
    assert found is not None and found.reason is NotApplicableReason.UNCLAIMED_DTYPE
    assert "int32" in found.words
    assert tier.inapplicable(STANDARD, vendor, "unit/opinfo/add/float32/promotion-int") is None


#: The int scalar (no promotion) and a plain sample of the op the fault breaks.
CONTROLS = ["unit/opinfo/add/int64/promotion-int", "unit/opinfo/add/int64/0"]
plant([{"op": "add", "kind": "tensor_dtype"}], [SCALAR_ID, *CONTROLS])


@pytest.mark.skipif(importlib.util.find_spec("simnpu") is None, reason="simnpu not installed")
def test_a_kernel_ignoring_the_scalars_category_is_caught_on_simnpu(
    planted_run: dict[str, dict[str, Any]],
) -> None:
    """int64 tensor + 2.5 returning int64: wrong-dtype before any value; the int scalar (no
    promotion) and a plain sample still pass."""
    assert {SCALAR_ID, *CONTROLS} <= LOCKED
    records = planted_run
    caught = records[SCALAR_ID]
    assert caught["status"] == "FAIL_SEMANTIC", caught["message"]
    assert caught["details"]["failure"] == "wrong-dtype"
    assert "float32" in caught["message"]
    for control in CONTROLS:
        assert records[control]["status"] == "PASS", records[control]["message"]
