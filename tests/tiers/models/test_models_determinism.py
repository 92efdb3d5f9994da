"""Building a case twice gives the same weights, inputs and outputs, bit for bit."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from models_helpers import cpu_context

from kit.standard import load_standard
from kit.tiers.models.cases import SOURCES, all_cases, find_case
from kit.tiers.models.flows import call_module, select_output
from kit.tiers.models.interface import BuiltModel, seeded

HF_IDS = [case.test_id for case in all_cases(load_standard()) if case.source == "hf"]


def _assert_same_tensors(first: dict[str, torch.Tensor], second: dict[str, torch.Tensor]) -> None:
    assert list(first) == list(second)
    for name in first:
        assert first[name].dtype == second[name].dtype, name
        assert torch.equal(first[name], second[name]), name


def _inputs(built: BuiltModel) -> dict[str, torch.Tensor]:
    assert isinstance(built.inputs, dict)
    return dict(built.inputs)


@pytest.mark.parametrize("test_id", HF_IDS)
def test_models_hf_build_is_deterministic(test_id: str) -> None:
    case = find_case(cpu_context().standard, test_id)
    first, second = SOURCES["hf"].build(case), SOURCES["hf"].build(case)
    assert not first.module.training
    _assert_same_tensors(first.module.state_dict(), second.module.state_dict())
    _assert_same_tensors(_inputs(first), _inputs(second))
    out_first = select_output(call_module(first.module, first.inputs), case.output)
    out_second = select_output(call_module(second.module, second.inputs), case.output)
    assert out_first.dtype == torch.float32
    assert torch.equal(out_first, out_second)


def test_models_different_models_get_different_seeds() -> None:
    # A model's training step trains the model its eager test runs: one seed for both.
    cases = [case for case in all_cases(load_standard()) if case.flow == "eager"]
    seeds = [case.seed for case in cases if not case.training]
    assert len(set(seeds)) == len(seeds)


def test_models_seeding_leaves_the_global_rng_alone() -> None:
    torch.manual_seed(1234)
    expected = torch.rand(4)
    torch.manual_seed(1234)
    with seeded(7):
        torch.rand(100)
    assert torch.equal(torch.rand(4), expected)


def test_models_weights_come_from_the_seed() -> None:
    """Another model id gives other weights: the seed, not a constant init, makes them."""
    case = find_case(cpu_context().standard, "models/hf/llama/eager")
    renamed = dataclasses.replace(case, name="llama-renamed")
    weights = SOURCES["hf"].build(case).module.state_dict()
    other = SOURCES["hf"].build(renamed).module.state_dict()
    key = "model.layers.0.self_attn.q_proj.weight"
    assert weights[key].std() > 0
    assert not torch.equal(weights[key], other[key])
