"""The DDP training step: a small seeded model wrapped in ``DistributedDataParallel`` on the
device, one step on each rank's own batch, against one process stepping the same model over all
the ranks' batches at once in float64 on the CPU.

DDP averages the ranks' gradients, and each rank's loss is the mean over its batch, so the
gradients equal those of the mean loss over the whole batch: the reference needs no ranks.
"""

from __future__ import annotations

import hashlib
from typing import Any

import torch

from kit.json_shape import RecordDetails
from kit.numerics.criteria import Tolerance
from kit.numerics.judging import assert_close
from kit.outcomes import ResultMismatch, numerics_details
from kit.standard import Standard
from kit.tiers.distributed.ids import DistributedId

#: The rows of each rank's batch, and the step's learning rate.
BATCH = 6
LEARNING_RATE = 0.1


def build_model(dtype: torch.dtype) -> torch.nn.Module:
    """The same model on every rank and in the judge (seeded), in ``dtype`` on the CPU."""
    generator_state = torch.random.get_rng_state()
    try:
        torch.manual_seed(40)
        model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(),
                                    torch.nn.Linear(16, 4))
    finally:
        torch.random.set_rng_state(generator_state)
    return model.to(dtype)


def batch(test: DistributedId, rank: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Rank ``rank``'s inputs and targets, in float64 on the CPU."""
    seed = int.from_bytes(hashlib.sha256(f"{test}#{rank}".encode()).digest()[:8], "big") >> 1
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.randn(BATCH, 8, generator=generator, dtype=torch.float64)
    return inputs, torch.randn(BATCH, 4, generator=generator, dtype=torch.float64)


def _step(model: torch.nn.Module, inputs: torch.Tensor, targets: torch.Tensor) -> None:
    loss = torch.nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.grad is not None:
                parameter.sub_(LEARNING_RATE * parameter.grad)


class RankStep:
    """What one rank does: the model on the device under DDP, one step on its batch."""

    def __init__(self, test: DistributedId, device: str) -> None:
        self.test = test
        self.device = device

    def __call__(self, rank: int) -> dict[str, list[torch.Tensor]]:
        from torch.nn.parallel import DistributedDataParallel

        dtype = getattr(torch, self.test.dtype)
        model = build_model(dtype).to(self.device)
        wrapped = DistributedDataParallel(model)
        inputs, targets = (t.to(dtype).to(self.device) for t in batch(self.test, rank))
        wrapped.zero_grad()
        _step(wrapped, inputs, targets)
        return {"gradient": [p.grad.cpu() for p in model.parameters()],  # type: ignore[union-attr]
                "parameter": [p.detach().cpu() for p in model.parameters()]}


def reference(test: DistributedId) -> dict[str, list[torch.Tensor]]:
    """The step of one float64 process over every rank's batch."""
    model = build_model(torch.float64)
    batches = [batch(test, rank) for rank in range(test.ranks)]
    _step(model, torch.cat([b[0] for b in batches]), torch.cat([b[1] for b in batches]))
    return {"gradient": [p.grad for p in model.parameters()],  # type: ignore[misc]
            "parameter": [p.detach() for p in model.parameters()]}


def judge_step(standard: Standard, test: DistributedId, ranks: list[Any]) -> RecordDetails:
    """Every rank's gradients and updated parameters against the reference's (the standard's
    training budget: ``gradient`` and ``sgd``)."""
    expected = reference(test)
    measurements = []
    for rank, actual in enumerate(ranks):
        if not isinstance(actual, dict) or set(actual) != set(expected):
            raise ResultMismatch(f"rank {rank}: expected {sorted(expected)}")
        for quantity, budget in (("gradient", "gradient"), ("parameter", "sgd")):
            measurements += assert_close(actual[quantity], expected[quantity],
                                         _tolerance(standard, budget), f"rank {rank} {quantity}")
    return {"ranks": test.ranks, **numerics_details(measurements)}


def _tolerance(standard: Standard, quantity: str) -> Tolerance:
    if standard.training is not None:
        return standard.training.criterion(quantity)
    return standard.tolerance("float32")  # a standard without a training budget (v1)
