"""The model tier's training step (``models/<source>/<model>/train``, standard v2).

The ids come from the models' eager cases where the standard declares a training budget; the
judge names the quantity and the first parameter off in layer order. qwen2 is the cheapest hf
model to train (a fraction of a second on the CPU).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import torch

from kit.outcomes import ResultMismatch
from kit.standard import load_standard
from kit.tiers.models.cases import EAGER, SOURCES, TRAIN, all_test_ids, find_case
from kit.tiers.models.tier import ModelsTier
from kit.tiers.models.training import device_training
from kit.tiers.models.training_judge import OTHER_PARAMETERS, TrainingMismatch, judge_training

MODEL = "models/hf/qwen2/train"


def test_v2_has_a_train_id_per_eager_model_and_v1_none() -> None:
    v2 = all_test_ids(load_standard("v2"))
    eager = [i for i in v2 if i.endswith(f"/{EAGER}")]
    assert [i for i in v2 if i.endswith(f"/{TRAIN}")] == [
        i.removesuffix(EAGER) + TRAIN for i in eager
    ]
    assert not any(i.endswith(f"/{TRAIN}") for i in all_test_ids(load_standard("v1")))
    assert MODEL in load_standard("v2").test_ids("models")


@pytest.fixture(scope="module")
def cpu_step() -> dict[str, Any]:
    """The step on the cpu device in float32: a conforming device's evidence."""
    case = find_case(load_standard("v2"), MODEL)
    return device_training(SOURCES[case.source].build(case), case, "cpu")


def _judge(evidence: dict[str, Any]) -> dict[str, Any]:
    standard = load_standard("v2")
    case = find_case(standard, MODEL)
    return judge_training(standard, SOURCES[case.source].build(case), case, evidence)


def test_cpu_float32_step_passes(cpu_step: dict[str, Any]) -> None:
    assert list(cpu_step) == ["loss", "gradient", "sgd", "adamw"]
    names = list(cpu_step["gradient"])
    assert names[0] == "model.embed_tokens.weight" and len(names) > 10
    assert _judge(cpu_step) == {}


@pytest.mark.parametrize("quantity", ["gradient", "adamw"])
def test_a_parameter_off_is_named_first_in_layer_order(
    cpu_step: dict[str, Any], quantity: str
) -> None:
    broken = copy.deepcopy(cpu_step)
    names = list(broken[quantity])
    middle, later = names[len(names) // 2], names[-1]
    for name in (later, middle):
        broken[quantity][name] = broken[quantity][name] * 1.01 + 1e-3
    with pytest.raises(TrainingMismatch, match=f"of {middle} is off first in layer order") as err:
        _judge(broken)
    training = err.value.details()["training"]
    assert training["quantity"] == quantity
    assert (training["first_off"], training["last_off"], training["off"]) == (middle, later, 2)
    assert err.value.details()["where"].endswith(f"of {middle}")


def test_a_loss_off_fails_before_any_gradient(cpu_step: dict[str, Any]) -> None:
    broken = copy.deepcopy(cpu_step)
    broken["loss"] = broken["loss"] * 1.01
    broken["gradient"] = {name: g * 2 for name, g in broken["gradient"].items()}
    with pytest.raises(TrainingMismatch, match="^the loss is off") as err:
        _judge(broken)
    assert err.value.details()["training"]["quantity"] == "loss"


def test_float64_values_are_a_result_mismatch(cpu_step: dict[str, Any]) -> None:
    broken = copy.deepcopy(cpu_step)
    broken["sgd"] = {name: value.to(torch.float64) for name, value in broken["sgd"].items()}
    with pytest.raises(AssertionError, match="float64") as err:
        _judge(broken)
    assert not isinstance(err.value, TrainingMismatch)


def test_a_parameter_the_model_does_not_have_is_a_semantic_failure(
    cpu_step: dict[str, Any],
) -> None:
    """What a device whose ``module.to()`` unties a tied weight sends: one more parameter."""
    broken = copy.deepcopy(cpu_step)
    for quantity in ("gradient", "sgd", "adamw"):
        broken[quantity]["lm_head.extra"] = torch.zeros(2)
    with pytest.raises(ResultMismatch, match=r"unexpected \['lm_head.extra'\]") as err:
        _judge(broken)
    assert err.value.details() == {"failure": OTHER_PARAMETERS}


def test_a_failing_step_may_be_blamed_on_the_optimizers_update_kernels() -> None:
    """``Tier.primitives`` traces the whole step: AdamW's ``addcdiv_`` and ``lerp_`` too."""
    standard = load_standard("v2")
    step = ModelsTier().primitives(standard, MODEL)
    forward = ModelsTier().primitives(standard, MODEL.removesuffix(TRAIN) + EAGER)
    assert {"addcdiv", "lerp", "mse_loss"} <= set(step) - set(forward)
