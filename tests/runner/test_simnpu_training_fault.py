"""A broken optimizer update on the real simnpu device: caught by the model's training step.

``drop_scalar`` on ``aten::addcdiv_`` loses the ``value`` of AdamW's update
(``param.addcdiv_(exp_avg, denom, value=-step_size)``). One ``ckit run`` under the current
standard (v2) shows the train id failing on the AdamW-updated values, classified, while the same
model's forward and the forward unit test of ``addcdiv`` (the out-of-place op) pass.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from runner_helpers import records_by_id, run_ckit

pytestmark = pytest.mark.slow(seconds=60)

pytest.importorskip("simnpu", reason="install the demo vendor: ckit vendors install simnpu")

TRAIN = "models/hf/qwen2/train"
#: Tests of the same model and op the fault must leave passing.
SPARED = ("models/hf/qwen2/eager", "unit/opinfo/addcdiv/float32/0")


@pytest.fixture(scope="module")
def faulty_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    base = tmp_path_factory.mktemp("training-fault")
    rules = [{"op": "aten::addcdiv_", "kind": "drop_scalar", "dtype": "float32"}]
    env = {**os.environ, "SIMNPU_FAULTS": json.dumps(rules), "XDG_CONFIG_HOME": str(base / "cfg")}
    selection = [arg for test_id in (TRAIN, *SPARED) for arg in ("--select", test_id)]
    out = base / "out"
    result = run_ckit(
        ["run", "--vendor", "simnpu", "--tier", "models,unit", *selection,
         "--no-sign", "--out", str(out)],
        env,
        timeout=600,
    )
    assert result.returncode == 1, result.stderr[-3000:]
    return records_by_id(out)


def test_broken_adamw_update_fails_the_train_id_on_adamw(
    faulty_run: dict[str, dict[str, Any]],
) -> None:
    record = faulty_run[TRAIN]
    assert record["status"] == "FAIL_NUMERIC", record["message"]
    training = record["details"]["training"]
    assert training["quantity"] == "adamw"
    # Every parameter is moved by the update: the first off is the first registered.
    assert training["first_off"] == "model.embed_tokens.weight"
    assert training["off"] == training["parameters"]
    assert record["message"].startswith(
        "TrainingMismatch: the AdamW-updated value of model.embed_tokens.weight is off first in "
        "layer order"
    )


@pytest.mark.parametrize("spared", SPARED)
def test_forward_of_the_model_and_the_op_pass(
    faulty_run: dict[str, dict[str, Any]], spared: str
) -> None:
    assert faulty_run[spared]["status"] == "PASS", faulty_run[spared]["message"]
