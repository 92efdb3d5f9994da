"""``numerics.training`` in standard.yaml: a tolerance per quantity of the training step."""

from __future__ import annotations

import pytest

from kit.config_reader import Node
from kit.errors import InputError
from kit.numerics.criteria import Tolerance
from kit.numerics.training import QUANTITIES, read_training_budget

BOUND = {"atol": 1e-6, "rtol": 1e-5}


def test_a_budget_per_quantity_with_an_optional_normwise_share() -> None:
    training = {q: BOUND for q in QUANTITIES} | {"gradient": {**BOUND, "normwise": 1e-4}}
    budget = read_training_budget(Node.within({"training": training}, "standard.yaml: numerics"))
    assert budget is not None
    assert budget.criterion("gradient") == Tolerance(1e-6, 1e-5, 1e-4)
    assert budget.criterion("adamw").describe() == BOUND
    assert read_training_budget(Node.within({}, "standard.yaml: numerics")) is None


def test_a_missing_quantity_is_refused_in_one_line() -> None:
    training = {q: BOUND for q in QUANTITIES if q != "sgd"}
    with pytest.raises(InputError, match=r"^standard.yaml: numerics.training.sgd: missing"):
        read_training_budget(Node.within({"training": training}, "standard.yaml: numerics"))


def test_normwise_bounds_small_elements_by_the_tensors_largest() -> None:
    import torch

    reference = torch.tensor([1.0, 1e-9], dtype=torch.float64)
    allowed = Tolerance(0.0, 1e-3, 1e-4).allowed(reference, torch.float32)
    assert allowed.tolist() == pytest.approx([1e-3 + 1e-4, 1e-12 + 1e-4])
