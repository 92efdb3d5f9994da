"""A vendor that forges its flow runs is still judged, by the kit, on the outputs it returns.

The fixture vendor (tests/fixtures/python/ckit_flow_forging_vendor.py) replaces the flow
pipeline in its worker: nothing is lowered, 99 ops are claimed delegated, and the outputs are
eager's (scaled for ``neg``); it also turns the kit's decision into a pass, in its process.
"""

from __future__ import annotations

from typing import Any

import pytest
from flows_tier_helpers import FIXTURES, ckit_env, records_by_id, run_ckit

VENDOR = str(FIXTURES / "vendors" / "flow-forging")
WRONG = "flows/executorch_xnnpack/opinfo/neg/float32/0"
RIGHT = "flows/executorch_xnnpack/opinfo/add/float32/0"


@pytest.fixture(scope="module")
def forged_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("flow-forging")
    env = ckit_env(base)
    out = base / "out"
    result = run_ckit(
        ["run", "--vendor", VENDOR, "--tier", "flows", "--flows", "executorch_xnnpack",
         "--select", WRONG, "--select", RIGHT, "--no-sign", "--out", str(out)],
        env,
    )
    assert (out / "report.json").exists(), result.stderr[-3000:]
    return records_by_id(out)


def test_forged_delegation_with_wrong_outputs_fails_numerically(
    forged_run: dict[str, Any],
) -> None:
    record = forged_run[WRONG]
    assert (record["status"], record["details"]["delegated_ops"]) == ("FAIL_NUMERIC", 99)


def test_forged_delegation_with_right_outputs_is_judged_on_those_outputs(
    forged_run: dict[str, Any],
) -> None:
    record = forged_run[RIGHT]
    assert (record["status"], record["details"]["max_abs_err"]) == ("PASS", 0.0)
