"""Real model tests through the kit: PASS on the cpu vendor, NOT_APPLICABLE when not claimed."""

from __future__ import annotations

from pathlib import Path

import pytest
from models_helpers import MODEL_TIER_SUITE, TODAY, junit_outcomes, write_vendor

from kit.pytest_plugin import build_context
from kit.tiers.models.cases import run_model_case

pytest_plugins = ["pytester"]


def test_models_llama_passes_on_cpu_through_pytest(pytester: pytest.Pytester) -> None:
    report = pytester.path / "junit.xml"
    # In this process: a subprocess would only import torch again before the same model run.
    result = pytester.runpytest_inprocess(
        "--ckit-vendor", "cpu",
        "--ckit-select", "models/hf/llama/eager",
        "-p", "no:cacheprovider",
        f"--junitxml={report}",
        str(MODEL_TIER_SUITE),
    )
    result.assert_outcomes(passed=1)
    assert junit_outcomes(report) == {"models/hf/llama/eager": ("passed", "")}


def test_models_unclaimed_flow_is_not_applicable(tmp_path: Path) -> None:
    vendor = write_vendor(tmp_path, "exportonly", "[float32]", "[executorch_xnnpack]")
    ckit = build_context(str(vendor), TODAY)
    with pytest.raises(pytest.skip.Exception, match="not applicable: vendor exportonly does not "
                       "claim flow eager"):
        run_model_case(ckit, "models/hf/llama/eager")


def test_models_unclaimed_float32_is_not_applicable(tmp_path: Path) -> None:
    vendor = write_vendor(tmp_path, "doubleonly", "[float64]", "[eager]")
    ckit = build_context(str(vendor), TODAY)
    with pytest.raises(pytest.skip.Exception, match="not applicable: vendor doubleonly does not "
                       "claim dtype float32"):
        run_model_case(ckit, "models/hf/bert/eager")
