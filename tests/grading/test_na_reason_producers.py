"""Every place the kit ends a test NOT_APPLICABLE gives one of its reason codes."""

from __future__ import annotations

import dataclasses
import importlib.util
from collections.abc import Callable

import pytest
from report_helpers import TODAY

from kit.context import KitContext
from kit.outcomes import na_reason_of
from kit.results import NotApplicableReason
from kit.standard import load_standard
from kit.tiers.models.cases import run_model_case
from kit.vendors import SkipManifest, load_vendor


def context(**vendor_changes: tuple[str, ...]) -> KitContext:
    vendor = dataclasses.replace(load_vendor("cpu"), **vendor_changes)
    return KitContext(load_standard(), vendor, SkipManifest(entries=()), None, TODAY)


def reason_code_of(call: Callable[[], object]) -> NotApplicableReason | None:
    with pytest.raises(pytest.skip.Exception) as skipped:
        call()
    assert str(skipped.value.msg).startswith("not applicable: ")
    return na_reason_of(skipped.value)


def test_unclaimed_dtype():
    ckit = context(dtypes=("float32",))
    code = reason_code_of(lambda: ckit.require_dtype("float64"))
    assert code is NotApplicableReason.UNCLAIMED_DTYPE


def test_unclaimed_autocast():
    ckit = context(autocast=("float16",))
    code = reason_code_of(lambda: ckit.require_autocast("bfloat16"))
    assert code is NotApplicableReason.UNCLAIMED_AUTOCAST


def test_unclaimed_flow():
    ckit = context(flows=("export",))
    code = reason_code_of(lambda: run_model_case(ckit, "models/hf/llama/eager"))
    assert code is NotApplicableReason.UNCLAIMED_FLOW


@pytest.mark.skipif(importlib.util.find_spec("timm") is not None, reason="timm is installed")
def test_optional_source_absent():
    code = reason_code_of(lambda: run_model_case(context(), "models/timm/resnet18/eager"))
    assert code is NotApplicableReason.OPTIONAL_SOURCE_ABSENT


def test_a_plain_pytest_skip_carries_no_code():
    assert reason_code_of(lambda: pytest.skip("not applicable: vendor says so")) is None
