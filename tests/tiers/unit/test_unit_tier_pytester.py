"""Real unit tests of the tier, run through pytest in a subprocess with the kit plugin."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from kit import paths
from kit.standard import load_standard

pytest_plugins = ["pytester"]

UNIT_TIER = paths.package_dir() / "tiers" / "unit"

#: A plugin the subprocess loads (-p) to log the kit status the plugin gave each test phase.
STATUS_RECORDER = """
import json, os

from kit.pytest_plugin import report_verdict

def pytest_runtest_logreport(report):
    verdict = report_verdict(report)
    if verdict is None:
        return
    with open(os.environ["UNIT_TIER_STATUS_LOG"], "a", encoding="utf-8") as log:
        record = {"id": report.nodeid.split("[", 1)[1][:-1], "status": verdict.status.value,
                  "message": verdict.message}
        log.write(json.dumps(record) + "\\n")
"""


def locked(glob_prefix: str) -> list[str]:
    return [i for i in load_standard().test_ids("unit") if i.startswith(glob_prefix)]


def run_tier(pytester: pytest.Pytester, vendor: str, *selects: str) -> pytest.RunResult:
    args = ["--ckit-vendor", vendor, "-p", "no:cacheprovider", "-p", "no:randomly"]
    for pattern in selects:
        args += ["--ckit-select", pattern]
    return pytester.runpytest_subprocess(*args, "-p", "unit_status_recorder", str(UNIT_TIER))


def statuses(log: Path) -> dict[str, tuple[str, str]]:
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    records = [json.loads(line) for line in lines]
    return {r["id"]: (r["status"], r["message"]) for r in records}


@pytest.fixture
def status_log(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    pytester.makepyfile(unit_status_recorder=STATUS_RECORDER)
    log = pytester.path / "statuses.jsonl"
    monkeypatch.setenv("UNIT_TIER_STATUS_LOG", str(log))
    return log


def test_cpu_passes_real_opinfo_and_opspec_tests(
    pytester: pytest.Pytester, status_log: Path
) -> None:
    add_ids = locked("unit/opinfo/add/float32/")
    spec_ids = locked("unit/opspec/layer_norm_module/float32/")
    # Every OpInfo sample of add (the alpha=2 one is 9) and its variants, e.g. empty inputs.
    assert {"unit/opinfo/add/float32/9", "unit/opinfo/add/float32/empty"} <= set(add_ids)
    assert spec_ids

    result = run_tier(
        pytester, "cpu", "unit/opinfo/add/float32/*", "unit/opspec/layer_norm_module/float32/*"
    )

    result.assert_outcomes(passed=len(add_ids) + len(spec_ids))
    assert statuses(status_log) == {i: ("PASS", "") for i in add_ids + spec_ids}


@pytest.mark.skipif(importlib.util.find_spec("simnpu") is None, reason="simnpu not installed")
def test_wrong_values_dtype_changes_and_missing_kernels_are_caught_on_a_real_device(
    pytester: pytest.Pytester, status_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    faults = [
        {"op": "add", "kind": "wrong_small", "dtype": "float32"},
        {"op": "mul", "kind": "dtype_change", "dtype": "float32"},
        {"op": "sub", "kind": "missing", "dtype": "float32"},
    ]
    monkeypatch.setenv("SIMNPU_FAULTS", json.dumps(faults))

    result = run_tier(
        pytester,
        "simnpu",
        "unit/opinfo/add/float32/0",
        "unit/opinfo/mul/float32/0",
        "unit/opinfo/sub/float32/0",
        "unit/opinfo/add/bfloat16/0",
    )

    result.assert_outcomes(passed=1, failed=3)
    recorded = statuses(status_log)
    assert recorded["unit/opinfo/add/bfloat16/0"] == ("PASS", "")
    assert recorded["unit/opinfo/add/float32/0"][0] == "FAIL_NUMERIC"
    assert "elements outside the bound" in recorded["unit/opinfo/add/float32/0"][1]
    assert recorded["unit/opinfo/mul/float32/0"][0] == "FAIL_SEMANTIC"
    assert (
        "dtype changed: expected torch.float32, got torch.float16"
        in recorded["unit/opinfo/mul/float32/0"][1]
    )
    assert recorded["unit/opinfo/sub/float32/0"][0] == "UNSUPPORTED"
