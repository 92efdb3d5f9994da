"""Standard v2's module source (``unit/module/<module>/<dtype>/<mode>-<sample>``): PyTorch's
ModuleInfos built on the device from seeded parameters, run forward and backward, and judged
against the same module on CPU in float64. A wrong convolution backward on the device (simnpu's
``wrong_small`` on ``convolution_backward``) fails the convolution's test naming a gradient
while a linear layer passes; a convolution that ignores channels-last inputs (simnpu's
``contiguous_result``) fails the ``channels_last`` test as metadata, its values right.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import torch
from unit_helpers import on_clean_cpu, plant

from kit.errors import InputError
from kit.standard import load_standard
from kit.tiers.unit.checking import UnitCase
from kit.tiers.unit.config import parse_unit_config
from kit.tiers.unit.entries import Comparison
from kit.tiers.unit.module_ids import MODES, ModuleId
from kit.tiers.unit.refusals import cpu_refused

CONV_TRAIN = "unit/module/nn.Conv2d/float32/train-0"
CONV_TRAIN_FLOAT64 = "unit/module/nn.Conv2d/float64/train-0"
#: A lazy module in float64: materialized from the inputs' shape in float32, then converted.
LAZY_FLOAT64 = "unit/module/nn.LazyConv1d/float64/train-0"
GROUP_NORM_BFLOAT16 = "unit/module/nn.GroupNorm/bfloat16/train-0"
CONV_CHANNELS_LAST = "unit/module/nn.Conv2d/float32/channels_last-0"
LINEAR = "unit/module/nn.Linear/float32/train-0"
BATCH_NORM_TRAIN = "unit/module/nn.BatchNorm2d/float32/train-0"
BATCH_NORM_EVAL = "unit/module/nn.BatchNorm2d/float32/eval-0"

#: The convolution's backward off by 1% on the device, its forward right.
WRONG_CONV_BACKWARD = {"op": "aten::convolution_backward", "kind": "wrong_small"}
#: The convolution's forward right in values, returned contiguous for channels-last inputs.
CONTIGUOUS_CONV = {"op": "convolution", "kind": "contiguous_result"}

plant([WRONG_CONV_BACKWARD, CONTIGUOUS_CONV],
      [CONV_TRAIN, CONV_TRAIN_FLOAT64, CONV_CHANNELS_LAST, LINEAR])
on_clean_cpu([BATCH_NORM_TRAIN, BATCH_NORM_EVAL, CONV_CHANNELS_LAST, LAZY_FLOAT64,
              GROUP_NORM_BFLOAT16])

needs_simnpu = pytest.mark.skipif(importlib.util.find_spec("simnpu") is None,
                                  reason="simnpu not installed")


def _judged(record: dict[str, Any]) -> set[str]:
    return {output["where"] for output in record["details"]["outputs"]}


@needs_simnpu
@pytest.mark.slow(seconds=90)
def test_a_wrong_convolution_backward_fails_that_module_naming_a_gradient(
    planted_run: dict[str, dict[str, Any]],
) -> None:
    for conv in (CONV_TRAIN, CONV_TRAIN_FLOAT64):  # caught in each dtype the module runs in
        caught = planted_run[conv]
        assert caught["status"] == "FAIL_NUMERIC", caught["message"]
        assert "grad of" in caught["message"]
        bound = caught["details"]["bound"]
        assert bound["class"] == "composite" and bound["widening"]
    linear = planted_run[LINEAR]
    assert linear["status"] == "PASS", linear["message"]
    # The output, the input's gradient and every parameter's gradient were judged.
    judged = _judged(linear)
    assert {"output['output']", "output['grad of weight']", "output['grad of bias']"} <= judged
    assert any("grad of kwargs['input']" in where for where in judged), judged


@needs_simnpu
@pytest.mark.slow(seconds=90)
def test_a_convolution_ignoring_channels_last_fails_as_metadata_not_values(
    planted_run: dict[str, dict[str, Any]],
) -> None:
    caught = planted_run[CONV_CHANNELS_LAST]
    assert caught["status"] == "FAIL_SEMANTIC", caught["message"]
    assert caught["details"]["failure"] == "wrong-memory-format"
    assert "output's memory format (contiguous, channels-last): (True, False) on the device, " \
        "(False, True) on CPU" in caught["message"]


@pytest.mark.slow(seconds=60)
def test_running_statistics_and_channels_last_pass_on_cpu(
    clean_cpu_run: dict[str, dict[str, Any]],
) -> None:
    for test_id in (BATCH_NORM_TRAIN, BATCH_NORM_EVAL, CONV_CHANNELS_LAST, LAZY_FLOAT64,
                    GROUP_NORM_BFLOAT16):
        assert clean_cpu_run[test_id]["status"] == "PASS", clean_cpu_run[test_id]["message"]
    # Training updates the running statistics: judged as values against float64's.
    assert "output['buffers']['running_mean']" in _judged(clean_cpu_run[BATCH_NORM_TRAIN])


def test_the_standard_locks_every_mode() -> None:
    locked = [ModuleId.of(t) for t in load_standard("v2").test_ids("unit")
              if t.startswith("unit/module/")]
    assert {module.mode for module in locked} == set(MODES)
    assert {module.module for module in locked if module.mode == "eval"} >= {"nn.BatchNorm2d"}


def test_each_module_runs_in_the_dtypes_of_the_standard_it_declares() -> None:
    """PyTorch's own module tests run a ModuleInfo in its declared dtypes: every one declares
    float32 and float64, three float16 or bfloat16 as well."""
    locked = [ModuleId.of(t) for t in load_standard("v2").test_ids("unit")
              if t.startswith("unit/module/")]
    dtypes: dict[str, set[str]] = {}
    for module in locked:
        dtypes.setdefault(module.module, set()).add(module.dtype)
    assert all({"float32", "float64"} <= found for found in dtypes.values())
    low = {name for name, found in dtypes.items() if found & {"float16", "bfloat16"}}
    assert low == {"nn.CrossEntropyLoss", "nn.LinearCrossEntropyLoss", "nn.GroupNorm"}
    assert dtypes["nn.CrossEntropyLoss"] == {"float32", "float64", "float16"}


@pytest.mark.parametrize("bad", [
    "unit/module/nn.Linear/float32/0",
    "unit/module/nn.Linear/float32/inference-0",
    "unit/module/nn.Linear/float32/train-x",
    "unit/optim/nn.Linear/float32/train-0",
])
def test_an_id_that_is_no_module_test_is_refused_in_one_line(bad: str) -> None:
    with pytest.raises(InputError, match="not a module test id") as refused:
        ModuleId.of(bad)
    assert "\n" not in str(refused.value)


def test_a_modules_section_without_a_backward_rule_is_refused(tmp_path: Path) -> None:
    data = {"ops": [{"op": "add", "dtypes": ["float32"]}],
            "modules": {"dtypes": ["float32"], "samples": 2, "class": "composite"}}
    with pytest.raises(InputError, match=r"unit.yaml: modules: .*backward") as refused:
        parse_unit_config(data, tmp_path / "unit.yaml")
    assert "\n" not in str(refused.value)


def _linear_case(float32_only: bool) -> UnitCase:
    """A linear layer's case; ``float32_only``: a module whose kernel CPU has in float32 alone,
    so the judge would have no float64 reference."""
    weight = torch.rand(3, 4, generator=torch.Generator().manual_seed(0))

    def make_inputs(device: str, upcast: bool) -> Any:
        dtype = torch.float64 if upcast else torch.float32
        return {"weight": weight.to(device, dtype), "x": torch.ones(2, 4, device=device,
                                                                   dtype=dtype)}

    def call(device: str, upcast: bool, inputs: Any) -> Any:
        if float32_only and inputs["x"].dtype == torch.float64:
            raise RuntimeError("\"addmm_impl_cpu_\" not implemented for 'Double'")
        return torch.nn.functional.linear(inputs["x"], inputs["weight"])

    return UnitCase("linear", "float32", Comparison(), make_inputs, call)


def test_a_module_cpu_cannot_run_in_float64_is_refused_at_lock_time() -> None:
    cases = {LINEAR: _linear_case(float32_only=True), CONV_TRAIN: _linear_case(False)}
    assert cpu_refused([LINEAR, CONV_TRAIN], cases.__getitem__) == [LINEAR]
