"""Standard v2's optimizer source (``unit/optim/<optimizer>/<dtype>/<impl>-<config>``): PyTorch's
OptimizerInfos stepped on the device and judged against the for-loop on CPU in float64. A
foreach kernel broken on the device (simnpu's ``wrong_small`` on ``_foreach_addcmul_``, AdamW's
second moment) fails its foreach test alone, naming the state; an optimizer the kit cannot
judge is NOT_APPLICABLE with the kit's reason, listed, never absent.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
from unit_helpers import on_clean_cpu, plant

from kit.errors import InputError
from kit.results import NotApplicableReason
from kit.standard import load_standard
from kit.tiers.unit.config import parse_unit_config
from kit.tiers.unit.optim_ids import UNJUDGED, OptimId

ADAMW_FOREACH = "unit/optim/AdamW/float32/foreach-0"
ADAMW_FORLOOP = "unit/optim/AdamW/float32/forloop-0"
ADAMW_FUSED = "unit/optim/AdamW/float32/fused-0"
SGD_MOMENTUM_FUSED = "unit/optim/SGD/float32/fused-4"
SPARSE_ADAM = "unit/optim/SparseAdam/float32/forloop-0"

#: The foreach in-place addcmul (a foreach optimizer's second moment) off by 1% on the device;
#: the eager ``addcmul_`` of the for-loop, and every forward op, stay right.
FOREACH_SECOND_MOMENT = {"op": "_foreach_addcmul_", "kind": "wrong_small"}

plant([FOREACH_SECOND_MOMENT], [ADAMW_FOREACH, ADAMW_FORLOOP, ADAMW_FUSED])
on_clean_cpu([SGD_MOMENTUM_FUSED, SPARSE_ADAM])

needs_simnpu = pytest.mark.skipif(importlib.util.find_spec("simnpu") is None,
                                  reason="simnpu not installed")


@needs_simnpu
@pytest.mark.slow(seconds=90)
def test_a_broken_foreach_kernel_fails_that_implementation_alone(
    planted_run: dict[str, dict[str, Any]],
) -> None:
    caught = planted_run[ADAMW_FOREACH]
    assert caught["status"] == "FAIL_NUMERIC", caught["message"]
    assert "['exp_avg_sq']" in caught["message"]
    assert caught["details"]["bound"]["class"] == "compound"
    for sibling in (ADAMW_FORLOOP, ADAMW_FUSED):
        assert planted_run[sibling]["status"] == "PASS", planted_run[sibling]["message"]
    # Each step's parameters and the state were judged, not the last step alone.
    judged = {output["where"] for output in planted_run[ADAMW_FORLOOP]["details"]["outputs"]}
    assert {"output['step 1'][0]", "output['step 3'][2]",
            "output['state']['param 0']['exp_avg']"} <= judged


@pytest.mark.slow(seconds=60)
def test_fused_runs_and_an_unjudged_optimizer_is_listed_with_its_reason(
    clean_cpu_run: dict[str, dict[str, Any]],
) -> None:
    fused = clean_cpu_run[SGD_MOMENTUM_FUSED]
    assert fused["status"] == "PASS", fused["message"]
    assert any("momentum_buffer" in output["where"] for output in fused["details"]["outputs"])
    sparse = clean_cpu_run[SPARSE_ADAM]
    assert sparse["status"] == "NOT_APPLICABLE"
    assert sparse["details"]["na_reason"] == NotApplicableReason.OPTIMIZER_NOT_JUDGED
    assert UNJUDGED["SparseAdam"].why in sparse["message"]


def test_the_standard_locks_every_shipped_config_of_the_unjudged_too() -> None:
    locked = [OptimId.of(t) for t in load_standard("v2").test_ids("unit")
              if t.startswith("unit/optim/")]
    assert {optim.optimizer for optim in locked} >= set(UNJUDGED)
    assert {optim.implementation for optim in locked} == {"forloop", "foreach", "fused"}


@pytest.mark.parametrize("bad", [
    "unit/optim/AdamW/float32/0",
    "unit/optim/AdamW/float32/vectorized-0",
    "unit/optim/AdamW/float32/foreach-x",
    "unit/opinfo/AdamW/float32/foreach-0",
])
def test_an_id_that_is_no_optimizer_test_is_refused_in_one_line(bad: str) -> None:
    with pytest.raises(InputError, match="not an optimizer test id") as refused:
        OptimId.of(bad)
    assert "\n" not in str(refused.value)


def test_an_optimizers_section_without_steps_is_refused_naming_the_key(tmp_path: Path) -> None:
    data = {"ops": [{"op": "add", "dtypes": ["float32"]}],
            "optimizers": {"dtypes": ["float32"], "class": "compound"}}
    with pytest.raises(InputError, match=r"unit.yaml: optimizers.steps: missing"):
        parse_unit_config(data, tmp_path / "unit.yaml")
