"""A vendor's code runs on the device but never judges: each attack yields the honest verdict.

One ``ckit run`` of a vendor whose module patches torch (CPU included) and the kit, hides tests
from collection, skips its own tests and forges results (tests/fixtures/python/
ckit_self_judging_vendor.py). The judge runs in a process that never imported that module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from runner_helpers import FIXTURES, records_by_id, run_ckit

VENDOR = str(FIXTURES / "vendors" / "self-judging")
CONTROL = "unit/opinfo/neg/float32/0"

# (attack, its test, the honest status)
ATTACKS = [
    ("mul_patched_on_every_device", "unit/opinfo/mul/float32/0", "FAIL_NUMERIC"),
    ("kit_comparison_rewritten_in_the_worker", "unit/opinfo/abs/float32/0", "FAIL_NUMERIC"),
    ("tests_hidden_from_collection", "unit/opinfo/cos/float32/0", "ERROR"),
    ("vendor_kernel_calls_pytest_skip", "unit/opinfo/exp/float32/0", "ERROR"),
    ("relu_patched_under_the_deploy_smoke_op", "deploy/smoke-op", "FAIL_NUMERIC"),
    ("gelu_patched_under_the_exported_program", "deploy/export-run", "FAIL_NUMERIC"),
    # Inputs on which its wrong ceil is right, sent as its inputs: the judge takes none
    # whose digest is not the standard's, regenerates, and finds them written over.
    ("worker_sending_other_inputs_is_judged_on_the_standards_inputs",
     "unit/opinfo/ceil/float32/0", "FAIL_SEMANTIC"),
]
FORGED = "unit/opinfo/sin/float32/0"


@pytest.fixture(scope="module")
def attacked_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any]]:
    import os

    base = tmp_path_factory.mktemp("self-judging")
    env = {**os.environ, "XDG_CONFIG_HOME": str(base / "cfg")}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(FIXTURES / "python"), *filter(None, [env.get("PYTHONPATH")])]
    )
    tests = [test_id for _, test_id, _ in ATTACKS] + [CONTROL, FORGED]
    out = base / "out"
    result = run_ckit(
        ["run", "--vendor", VENDOR, "--tier", "deploy,unit",
         *(arg for test_id in tests for arg in ("--select", test_id)),
         "--timeout", "60", "--no-sign", "--out", str(out)],
        env,
        timeout=900,
    )
    assert (out / "report.json").exists(), result.stderr[-3000:]
    return result.returncode, records_by_id(Path(out))


@pytest.mark.parametrize(
    ("test_id", "honest"), [(t, s) for _, t, s in ATTACKS], ids=[a for a, _, _ in ATTACKS]
)
def test_attack_yields_the_honest_verdict(
    attacked_run: tuple[int, dict[str, Any]], test_id: str, honest: str
) -> None:
    _, records = attacked_run
    assert records[test_id]["status"] == honest, records[test_id]["message"]


def test_self_skip_is_named_as_such(attacked_run: tuple[int, dict[str, Any]]) -> None:
    _, records = attacked_run
    assert "only the kit decides" in records["unit/opinfo/exp/float32/0"]["message"]


def test_forged_pass_in_the_result_pipe_does_not_pass(
    attacked_run: tuple[int, dict[str, Any]]
) -> None:
    _, records = attacked_run
    assert records[FORGED]["status"] != "PASS", records[FORGED]


def test_an_honest_test_of_the_same_vendor_still_passes(
    attacked_run: tuple[int, dict[str, Any]]
) -> None:
    _, records = attacked_run
    assert records[CONTROL]["status"] == "PASS", records[CONTROL]["message"]


def test_the_run_is_graded_non_conformant(attacked_run: tuple[int, dict[str, Any]]) -> None:
    returncode, _ = attacked_run
    assert returncode == 1
