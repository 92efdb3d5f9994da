"""Real unit tests of the tier, run through pytest in a subprocess with the kit plugin."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from readme_clone import KIT_ROOT, block_commands, readme_block

from kit import paths
from kit.standard import load_standard

pytest_plugins = ["pytester"]

UNIT_TIER = paths.package_dir() / "tiers" / "unit"
#: The README's block that reruns single tests with plain pytest.
PLAIN_PYTEST = "Any single test reruns with plain pytest"

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


def test_cpu_passes_real_opinfo_and_opspec_tests(tmp_path: Path) -> None:
    """The README's plain-pytest line as written, from the kit's checkout (``.venv/bin/pytest``:
    the interpreter under test); the status recorder and an op spec's tests added to it through
    ``PYTEST_ADDOPTS``."""
    ((program, *args),) = block_commands(readme_block(PLAIN_PYTEST))
    assert program == ".venv/bin/pytest" and "--ckit-select" in args, args
    add_ids = locked("unit/opinfo/add/float32/")
    spec_ids = locked("unit/opspec/layer_norm_module/float32/")
    # Every OpInfo sample of add (the alpha=2 one is 9) and its variants, e.g. empty inputs.
    assert {"unit/opinfo/add/float32/9", "unit/opinfo/add/float32/empty"} <= set(add_ids)
    assert spec_ids
    (tmp_path / "unit_status_recorder.py").write_text(STATUS_RECORDER, encoding="utf-8")
    log = tmp_path / "statuses.jsonl"
    env = {**os.environ, "UNIT_TIER_STATUS_LOG": str(log), "PYTHONPATH": str(tmp_path),
           "PYTEST_ADDOPTS": "-p no:randomly -p unit_status_recorder "
                             "--ckit-select=unit/opspec/layer_norm_module/float32/*"}
    done = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=KIT_ROOT, env=env,
                          capture_output=True, text=True, timeout=600, check=False)

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    summary = done.stdout.splitlines()[-1]  # e.g. "=== 39 passed, 3 deselected in 7.07s ==="
    assert re.match(rf"=+ {len(add_ids) + len(spec_ids)} passed[, ]", summary), summary
    assert statuses(log) == {i: ("PASS", "") for i in add_ids + spec_ids}


@pytest.mark.full
@pytest.mark.slow(seconds=120)
def test_the_k_line_runs_as_written_and_every_test_it_selects_passes(tmp_path: Path) -> None:
    """The README's ``-k`` line as written, from the kit's checkout: it collects every tier,
    then runs what ``-k`` selects (add's float32 tests among them, and every other id holding
    both words), each passing or not applicable on cpu. In ``make test-full``: collecting every
    tier is most of a minute on 2 cores."""
    ((program, *args),) = block_commands(readme_block(PLAIN_PYTEST, 1))
    assert program == ".venv/bin/pytest" and "-k" in args, args
    (tmp_path / "unit_status_recorder.py").write_text(STATUS_RECORDER, encoding="utf-8")
    log = tmp_path / "statuses.jsonl"
    env = {**os.environ, "UNIT_TIER_STATUS_LOG": str(log), "PYTHONPATH": str(tmp_path),
           "PYTEST_ADDOPTS": "-p no:randomly -p unit_status_recorder"}
    done = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=KIT_ROOT, env=env,
                          capture_output=True, text=True, timeout=1200, check=False)

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    ran = statuses(log)
    assert set(locked("unit/opinfo/add/float32/")) <= set(ran)
    assert all("add" in i and "float32" in i for i in ran), sorted(ran)[:5]
    assert {status for status, _ in ran.values()} <= {"PASS", "NOT_APPLICABLE"}, ran


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
