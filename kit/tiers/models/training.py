"""A model's training step, on the device and in the float64 reference (ids ``.../train``).

The step: the model (kept in eval mode, so dropout draws no random numbers and batch norms use
their running statistics) called with grad enabled, the standard's output compared by the
mean squared error with a seeded target, ``loss.backward()``, then from the same parameters
and gradients ``STEPS`` steps of SGD with momentum and, from the parameters restored, ``STEPS``
of AdamW. Two steps from one gradient, because a first step only writes the momentum and moment
buffers: the second reads them back (SGD's ``momentum * buf + grad``, Adam's bias corrections).

The optimizers are torch's own with their default implementation choice (``foreach``/
``fused`` unset): the device runs whichever kernels PyTorch picks for it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import torch

from kit.errors import InputError
from kit.numerics.training import QUANTITIES
from kit.tiers.models.flows import map_tensors, select_output
from kit.tiers.models.interface import BuiltModel, ModelCase, seed_for
from kit.tiers.models.segments import TRAIN

#: Steps of each optimizer, all from the one gradient.
STEPS = 2
#: What the evidence holds per parameter, in the order they are judged (after the loss): the
#: gradient, then the value after each optimizer of ``OPTIMIZERS``.
PER_PARAMETER = QUANTITIES[1:]

Optimizer = Callable[[Sequence[torch.Tensor]], torch.optim.Optimizer]
#: The optimizers, by the quantity their updated values are judged as; torch's defaults beyond
#: these (AdamW's betas and eps, no Nesterov, no dampening).
OPTIMIZERS: dict[str, Optimizer] = {
    "sgd": lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9),
    "adamw": lambda params: torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01),
}
assert PER_PARAMETER == ("gradient", *OPTIMIZERS)  # one list of quantities: the budget's


def training_target(case: ModelCase, like: torch.Tensor) -> torch.Tensor:
    """The seeded float32 target the output is regressed on (the same bits for every run)."""
    generator = torch.Generator(device="cpu").manual_seed(seed_for(f"{case.seed}/{TRAIN}"))
    return torch.randn(tuple(like.shape), generator=generator, dtype=torch.float32)


def device_training(built: BuiltModel, case: ModelCase, device: str,
                    off_path: Collection[str] = ()) -> dict[str, Any]:
    """The step on the device in float32: the worker's evidence (moved to CPU on saving).

    ``off_path``: parameters the loss does not reach, left out whatever gradient they got (a
    compiled step's backward, one autograd node for the whole graph, hands zeros to the
    parameters of outputs the loss ignores, where eager autograd leaves them None)."""
    module = built.module.to(device)
    inputs = map_tensors(built.inputs, lambda t: t.to(device))
    loss, reached = forward_backward(module, inputs, case)
    trained = [(name, p) for name, p in reached if name not in off_path]
    gradients = {name: p.grad.detach().clone() for name, p in trained if p.grad is not None}
    return {"loss": loss, "gradient": gradients, **optimizer_steps(trained)}


def reference_training(
    built: BuiltModel, case: ModelCase, device_gradients: Mapping[str, torch.Tensor]
) -> dict[str, Any]:
    """The step on a fresh build on the CPU in the case's reference dtype (float64).

    Its loss and gradients are the model's own; its optimizer steps start from the *device's*
    gradients (upcast), so an update is judged on the device's optimizer alone: a gradient
    within its budget, amplified by Adam's division by ``sqrt(v)`` where it is near zero, never
    moves an update out of its own."""
    dtype = getattr(torch, case.reference_dtype)
    module = built.module.to(dtype)
    inputs = map_tensors(built.inputs, lambda t: t.to(dtype) if t.is_floating_point() else t)
    loss, trained = forward_backward(module, inputs, case)
    gradients = {name: p.grad.detach().clone() for name, p in trained if p.grad is not None}
    with torch.no_grad():
        for name, parameter in trained:
            if name in device_gradients:
                parameter.grad = device_gradients[name].to(device="cpu", dtype=dtype).clone()
    return {"loss": loss, "gradient": gradients, **optimizer_steps(trained)}


def forward_backward(
    module: torch.nn.Module, inputs: Any, case: ModelCase
) -> tuple[torch.Tensor, list[tuple[str, torch.nn.Parameter]]]:
    """The loss, and the parameters it reached (those with a gradient) by name in registration
    order."""
    with torch.enable_grad():
        output = select_output(_call(module, inputs), case.output)
        if not isinstance(output, torch.Tensor):
            raise InputError(f"{case.test_id}: the trained output is not one tensor")
        target = training_target(case, output).to(device=output.device, dtype=output.dtype)
        loss = torch.nn.functional.mse_loss(output, target)
        loss.backward()
    trained = [(name, p) for name, p in module.named_parameters() if p.grad is not None]
    return loss.detach(), trained


def optimizer_steps(trained: list[tuple[str, torch.nn.Parameter]]) -> dict[str, Any]:
    """Per optimizer, every trained parameter after ``STEPS`` steps from the same start."""
    parameters = [p for _, p in trained]
    return {name: _stepped(make(parameters), trained) for name, make in OPTIMIZERS.items()}


def _call(module: torch.nn.Module, inputs: Any) -> Any:
    return module(**inputs) if isinstance(inputs, Mapping) else module(*inputs)


def _stepped(
    optimizer: torch.optim.Optimizer, trained: list[tuple[str, torch.nn.Parameter]]
) -> dict[str, torch.Tensor]:
    """The parameters after ``STEPS`` steps; then put back as they were, for the next one."""
    saved = [p.detach().clone() for _, p in trained]
    for _ in range(STEPS):
        optimizer.step()
    stepped = {name: p.detach().clone() for name, p in trained}
    with torch.no_grad():
        for (_, parameter), was in zip(trained, saved, strict=True):
            parameter.copy_(was)
    return stepped


