"""PyTorch's OptimizerInfos (``optim_db``) as unit cases: ``unit/optim/<optimizer>/<dtype>/
<implementation>-<config>`` (``kit.tiers.unit.optim_ids``).

An OptimizerInfo becomes tests thus: each config its ``optim_inputs_func`` gives on CPU (the
same list on every device: the ids are the standard's), in each implementation it lists
(``supported_impls``: the plain for-loop always, ``foreach`` and ``fused`` where listed), in
each dtype of the standard's ``optimizers`` section. One test is a ``UnitCase`` like any other:
its inputs are a few seeded parameters and a seeded gradient per parameter and step; its call
builds the optimizer over copies of the parameters and steps it ``steps`` times; its result is
the parameters after each step and the optimizer's state (``state_dict``'s tensors). The judge's
float64 reference runs the for-loop implementation on CPU from the same inputs, so a foreach
or fused kernel is judged against the plain loop's arithmetic, as PyTorch's own
``test_foreach_matches_forloop`` does.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable, Mapping
from typing import Any

import torch

from kit.errors import InputError
from kit.standard import Standard
from kit.tiers.unit.checking import UnitCase
from kit.tiers.unit.config import Optimizers, UnitConfig, load_unit_config
from kit.tiers.unit.opinfo_cases import NoSuchSample
from kit.tiers.unit.optim_ids import FOREACH, FORLOOP, FUSED, UNJUDGED, OptimId
from kit.tiers.unit.trees import TORCH_DTYPES

#: The parameters' shapes: a matrix (factored by Adafactor), a vector and a 3-d tensor.
PARAMETER_SHAPES = ((4, 3), (5,), (2, 3, 2))


@functools.cache
def parameter_shapes(info: Any) -> tuple[tuple[int, ...], ...]:
    """``PARAMETER_SHAPES``, or their matrices alone for an optimizer refusing other parameters
    (Muon takes 2-d parameters only)."""
    try:
        info.optim_cls([torch.zeros(shape) for shape in PARAMETER_SHAPES])
    except ValueError:
        return tuple(shape for shape in PARAMETER_SHAPES if len(shape) == 2)
    return PARAMETER_SHAPES


def _optim_db() -> Any:
    from torch.testing._internal.common_optimizers import optim_db

    return optim_db


@functools.cache
def optimizer_info(name: str) -> Any:
    """The installed release's OptimizerInfo of ``name``; ``NoSuchSample`` where it has none."""
    for info in _optim_db():
        if info.name == name:
            return info
    raise NoSuchSample(f"torch {torch.__version__} has no OptimizerInfo {name!r}; regenerate the "
                     "list with `ckit standard lock`")


def implementations(info: Any) -> tuple[str, ...]:
    """The implementations a test runs of ``info``: the for-loop, then those it lists."""
    return (FORLOOP, *(impl for impl in (FOREACH, FUSED) if impl in info.supported_impls))


def configs(info: Any, dtype: str) -> list[Any]:
    """``info``'s configs, as its ``optim_inputs_func`` gives them on CPU."""
    return list(info.optim_inputs_func(device="cpu", dtype=TORCH_DTYPES[dtype]))


def check_unjudged() -> None:
    """``optim_ids.UNJUDGED`` still says what the release's OptimizerInfos say: each names an
    OptimizerInfo, its fact holds, and every OptimizerInfo with such a fact is listed."""
    infos = {info.name: info for info in _optim_db()}
    for name, unjudged in UNJUDGED.items():
        if name not in infos or (unjudged.fact and not getattr(infos[name], unjudged.fact)):
            raise InputError(f"kit.tiers.unit.optim_ids.UNJUDGED: {name}: no OptimizerInfo of "
                             f"torch {torch.__version__} with {unjudged.fact or 'that name'}")
    facts = {unjudged.fact for unjudged in UNJUDGED.values() if unjudged.fact}
    for name, info in infos.items():
        if name not in UNJUDGED and any(getattr(info, fact) for fact in facts):
            raise InputError(f"torch {torch.__version__}'s OptimizerInfo {name} has one of "
                             f"{', '.join(sorted(facts))}: say in kit.tiers.unit.optim_ids."
                             "UNJUDGED whether the kit can judge it")


def optim_test_ids(config: UnitConfig) -> list[str]:
    """Every optimizer test of the standard (none where it has no ``optimizers`` section)."""
    if config.optimizers is None:
        return []
    check_unjudged()
    return [OptimId(info.name, dtype, impl, index).test_id
            for info in _optim_db()
            for dtype in config.optimizers.dtypes
            for index in range(len(configs(info, dtype)))
            for impl in implementations(info)]


def _settings(config: UnitConfig) -> Optimizers:
    if config.optimizers is None:
        raise InputError(f"{config.source}: no optimizers section: the standard runs no "
                         "optimizer test")
    return config.optimizers


def _uniform(generator: torch.Generator, shape: tuple[int, ...], dtype: torch.dtype
             ) -> torch.Tensor:
    # Drawn in float64 and rounded once, as the op specs' inputs: the upcast reference sees
    # the very same values.
    return (torch.rand(shape, generator=generator, dtype=torch.float64) * 2 - 1).to(dtype)


def _implementation_kwargs(info: Any, implementation: str) -> dict[str, bool]:
    """The flags that choose ``implementation`` (none for an optimizer offering only one)."""
    if implementation == FUSED:
        return {"fused": True}
    if FOREACH not in info.supported_impls:
        return {}
    return {"foreach": implementation == FOREACH}


def _state_tensors(optimizer: torch.optim.Optimizer) -> dict[str, dict[str, torch.Tensor]]:
    """The optimizer's state per parameter, its tensors by name (``step`` included)."""
    state = optimizer.state_dict()["state"]
    return {f"param {index}": {key: value.detach().clone() for key, value in entries.items()
                               if isinstance(value, torch.Tensor)}
            for index, entries in sorted(state.items())}


def optim_unit_case(config: UnitConfig, test_id: str) -> UnitCase:
    """The inputs and call of one optimizer test, rebuilt identically in any process."""
    settings = _settings(config)
    optim_id = OptimId.of(test_id)
    info = optimizer_info(optim_id.optimizer)
    if optim_id.dtype not in settings.dtypes or optim_id.implementation not in implementations(
            info):
        raise NoSuchSample(f"{test_id}: no such optimizer test; regenerate the list with "
                           "`ckit standard lock`")
    found = configs(info, optim_id.dtype)
    if optim_id.config >= len(found):
        raise NoSuchSample(f"{test_id}: {info.name} has {len(found)} configs on torch "
                           f"{torch.__version__}; regenerate the list with `ckit standard lock`")
    kwargs = dict(found[optim_id.config].kwargs)
    dtype = TORCH_DTYPES[optim_id.dtype]
    generator = torch.Generator().manual_seed(zlib.crc32(test_id.encode()))
    shapes = parameter_shapes(info)
    params = [_uniform(generator, shape, dtype) for shape in shapes]
    grads = [[_uniform(generator, shape, dtype) for shape in shapes]
             for _ in range(settings.steps)]

    def make_inputs(device: str, upcast: bool) -> dict[str, Any]:
        def placed(tensor: torch.Tensor) -> torch.Tensor:
            return tensor.to(device, torch.float64 if upcast else tensor.dtype, copy=True)

        return {"params": [placed(p) for p in params],
                "grads": [[placed(g) for g in step] for step in grads]}

    def call(device: str, upcast: bool, inputs: Mapping[str, Any]) -> dict[str, Any]:
        # The float64 reference is always the plain loop's arithmetic.
        chosen = FORLOOP if upcast else optim_id.implementation
        return run_steps(info, {**kwargs, **_implementation_kwargs(info, chosen)}, inputs)

    label = f"optimizer {info.name} config {optim_id.config} ({found[optim_id.config].desc}), " \
            f"{optim_id.implementation}"
    return UnitCase(label, optim_id.dtype, settings.comparison, make_inputs, call,
                    repeatable=False)


def run_steps(info: Any, kwargs: Mapping[str, Any], inputs: Mapping[str, Any]
              ) -> dict[str, Any]:
    """The optimizer over copies of the inputs' parameters, stepped once per gradient set:
    the parameters after each step, then the state."""
    params = [torch.nn.Parameter(p.detach().clone()) for p in inputs["params"]]
    optimizer = info.optim_cls(params, **kwargs)
    result: dict[str, Any] = {}
    for step, grads in enumerate(inputs["grads"], start=1):
        closure = _closure(info, params, grads)
        closure()
        optimizer.step(closure) if info.step_requires_closure else optimizer.step()
        result[f"step {step}"] = [param.detach().clone() for param in params]
    result["state"] = _state_tensors(optimizer)
    return result


def _closure(info: Any, params: list[torch.nn.Parameter], grads: list[torch.Tensor]
             ) -> Callable[[], torch.Tensor]:
    """Sets the step's seeded gradients (sparse where the optimizer takes no other) and returns
    the loss they are the gradients of, ``sum(param * grad)``: what an optimizer whose step
    calls a closure (LBFGS) calls. Every optimizer's call runs on CPU at lock time (random
    draws, vacuity), those the kit does not judge (``optim_ids.UNJUDGED``) too."""

    def closure() -> torch.Tensor:
        for param, grad in zip(params, grads, strict=True):
            grad = grad.detach().clone()
            param.grad = grad.to_sparse() if info.only_supports_sparse_grads else grad
        return sum((p.detach() * g).sum() for p, g in zip(params, grads, strict=True)
                   ) or torch.zeros(())

    return closure


def optim_arguments(test_id: str) -> Any:
    """What an optimizer test binds outside its inputs, for its input digest: the optimizer,
    its config's arguments and the implementation's flags."""
    optim_id = OptimId.of(test_id)
    info = optimizer_info(optim_id.optimizer)
    kwargs = dict(configs(info, optim_id.dtype)[optim_id.config].kwargs)
    return (info.name, kwargs, _implementation_kwargs(info, optim_id.implementation))


def refused_ids(standard: Standard, test_ids: list[str]) -> list[str]:
    """The optimizer tests among ``test_ids`` whose optimizer CPU refuses to construct (the
    locked ``OPTIM_REFUSED``), decided in the kit's process at lock time; those the kit does not
    judge (``optim_ids.UNJUDGED``) are NOT_APPLICABLE already."""
    from kit.tiers.unit.refusals import cpu_refused

    config = load_unit_config(standard)
    judged = [test_id for test_id in test_ids if OptimId.of(test_id).optimizer not in UNJUDGED]
    return cpu_refused(judged, lambda test_id: optim_unit_case(config, test_id))
