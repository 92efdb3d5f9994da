"""Optional sources (TIMM, TorchBench) keep their tests, which end NOT_APPLICABLE when absent."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from models_helpers import MODEL_TIER_SUITE, junit_outcomes

from kit.standard import load_standard
from kit.tiers.models.cases import SOURCES, all_test_ids

pytest_plugins = ["pytester"]

ABSENT_REASONS = {
    "timm": "timm is not installed (optional model source)",
    "torchbench": "torchbench (torchbenchmark) is not installed (optional model source)",
}
PACKAGES = {"timm": "timm", "torchbench": "torchbenchmark"}


def _require_absent(source: str) -> None:
    if importlib.util.find_spec(PACKAGES[source]) is not None:
        pytest.skip(f"{PACKAGES[source]} is installed here; this checks the absent path")


@pytest.mark.parametrize("source", sorted(ABSENT_REASONS))
def test_models_absent_source_reports_why(source: str) -> None:
    _require_absent(source)
    assert SOURCES[source].unavailable_reason() == ABSENT_REASONS[source]


def test_models_hf_source_is_available() -> None:
    assert SOURCES["hf"].unavailable_reason() is None


def test_models_absent_sources_run_not_applicable_never_pass(pytester: pytest.Pytester) -> None:
    for source in ABSENT_REASONS:
        _require_absent(source)
    report = pytester.path / "junit.xml"
    # In this process: nothing of a model runs (each test ends NOT_APPLICABLE), and a
    # subprocess would only import torch again.
    result = pytester.runpytest_inprocess(
        "--ckit-vendor", "cpu",
        # eager: the flows cpu claims (program flows it does not claim say so first).
        "--ckit-select", "models/timm/*/eager",
        "--ckit-select", "models/torchbench/*/eager",
        "-p", "no:cacheprovider",
        f"--junitxml={report}",
        str(MODEL_TIER_SUITE),
    )
    expected_ids = [
        i for i in all_test_ids(load_standard())
        if i.split("/")[1] in ABSENT_REASONS and i.endswith("/eager")
    ]
    result.assert_outcomes(skipped=len(expected_ids))
    outcomes = junit_outcomes(report)
    assert sorted(outcomes) == expected_ids
    for test_id, (outcome, message) in outcomes.items():
        source = test_id.split("/")[1]
        assert (outcome, message) == ("skipped", f"not applicable: {ABSENT_REASONS[source]}")


def test_models_collection_imports_no_model_package(tmp_path: Path) -> None:
    code = (
        "import sys, pytest\n"
        f"rc = pytest.main(['--ckit-vendor', 'cpu', '--collect-only', '-q', "
        f"'-p', 'no:cacheprovider', {str(MODEL_TIER_SUITE)!r}])\n"
        "packages = ('transformers', 'timm', 'torchbenchmark')\n"
        "heavy = sorted(m for m in packages if m in sys.modules)\n"
        "print('RC', int(rc), 'IMPORTED', heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert "RC 0 IMPORTED []" in done.stdout, done.stdout + done.stderr
