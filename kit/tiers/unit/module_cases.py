"""PyTorch's ModuleInfos (``module_db``) as unit cases: ``unit/module/<module>/<dtype>/
<mode>-<sample>`` (``kit.tiers.unit.module_ids``).

A ModuleInfo becomes tests thus: its ``module_inputs_func`` gives, on CPU in each dtype of the
standard's ``modules`` section and in training (and in evaluation where the ModuleInfo says the
two differ), a list of samples (a constructor's arguments and a forward's); the first
``samples`` of them run (an index names the same sample whatever the selection, so ids stay
valid when more are selected). Where the ModuleInfo declares that the memory format affects
its result, the same samples of rank 4 or 5 also run in channels-last memory format (inputs and
parameters).

One test is a ``UnitCase`` like any other. Its inputs are the forward's arguments, the module's
state (parameters and buffers, initialized once on CPU in the tested dtype under a seed from
the test id) and a seeded ``grad_output`` per differentiable output; its call builds the
module on the device from that state, runs the forward in the mode, back-propagates the
``grad_output``s and returns the forward's result, each floating input's gradient, each
parameter's gradient and the buffers after the call (batch norm's running statistics). The
judge's reference is the same call on CPU with every floating tensor widened to float64: the
very parameters, in float64. In ``channels_last`` mode the case also observes, as facts
compared exactly with CPU's, whether each output and input gradient is contiguous and whether
it is contiguous in the memory format: the result's strides judged as metadata.
"""

from __future__ import annotations

import copy
import functools
import warnings
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import torch

from kit.errors import InputError
from kit.tiers.unit.checking import Fact, UnitCase
from kit.tiers.unit.config import Modules, UnitConfig
from kit.tiers.unit.module_ids import CHANNELS_LAST, EVAL, TRAIN, ModuleId
from kit.tiers.unit.opinfo_cases import NoSuchSample
from kit.tiers.unit.samples import place_exact, seed_of
from kit.tiers.unit.seeding import seeded_rngs
from kit.tiers.unit.trees import TORCH_DTYPES, map_tensors, tensor_leaves
from kit.tiers.unit.variants.backward import attach, largest

#: The memory format a channels-last sample's tensors of each rank take.
MEMORY_FORMATS = {4: torch.channels_last, 5: torch.channels_last_3d}


def _module_db() -> Any:
    from torch.testing._internal.common_modules import module_db

    return module_db


@functools.cache
def module_info(name: str) -> Any:
    """The installed release's ModuleInfo of ``name``; ``NoSuchSample`` where it has none."""
    for info in _module_db():
        if info.name == name:
            return info
    raise NoSuchSample(f"torch {torch.__version__} has no ModuleInfo {name!r}; regenerate the "
                       "list with `ckit standard lock`")


def declared_dtypes(info: Any) -> frozenset[str]:
    """The dtypes ``info`` declares (``ModuleInfo.dtypes``: the ones PyTorch's own module tests
    run it in), by name."""
    return frozenset(str(dtype).removeprefix("torch.") for dtype in info.dtypes)


def modes(info: Any) -> tuple[str, ...]:
    """The modes ``info`` runs in (``module_ids.MODES``)."""
    return (TRAIN, *((EVAL,) if info.train_and_eval_differ else ()),
            *((CHANNELS_LAST,) if info.module_memformat_affects_out else ()))


@functools.cache
def module_samples(name: str, dtype: str, training: bool) -> tuple[Any, ...]:
    """Every sample ``module_inputs_func`` gives on CPU in ``dtype`` and mode, in its order
    (ids index into it), generated under a seed from (module, dtype, mode)."""
    info = module_info(name)
    with seeded_rngs(seed_of(name, dtype, TRAIN if training else EVAL)), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tuple(info.module_inputs_func(info, device="cpu", dtype=TORCH_DTYPES[dtype],
                                             requires_grad=True, training=training))


def has_channels_last(sample: Any) -> bool:
    """Whether a tensor of the sample's forward has a channels-last format (rank 4 or 5)."""
    return any(t.dim() in MEMORY_FORMATS for _, t in tensor_leaves(_forward_arguments(sample)))


def _forward_arguments(sample: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    forward = sample.forward_input
    return tuple(forward.args), dict(forward.kwargs)


def _runs(sample: Any, mode: str) -> bool:
    """Whether ``sample`` is a test in ``mode``: it has a forward, and a memory format where
    the mode is channels-last."""
    if sample.forward_input is None:
        return False
    return mode != CHANNELS_LAST or has_channels_last(sample)


def module_test_ids(config: UnitConfig) -> list[str]:
    """Every module test of the standard (none where it has no ``modules`` section): each
    ModuleInfo in each dtype of the ``modules`` section it declares."""
    if config.modules is None:
        return []
    settings = config.modules
    ids = []
    for info in _module_db():
        for dtype in (d for d in settings.dtypes if d in declared_dtypes(info)):
            for mode in modes(info):
                found = _generated(info.name, dtype, mode)
                ids += [ModuleId(info.name, dtype, mode, index).test_id
                        for index, sample in enumerate(found[:settings.samples])
                        if _runs(sample, mode)]
    return ids


def _generated(name: str, dtype: str, mode: str) -> tuple[Any, ...]:
    """``module_samples``, or none where the release's ``module_inputs_func`` refuses to give
    them: the ModuleInfo then has no test, which ``ckit standard show`` counts as not in the
    standard's list (``kit.tiers.unit.databases``), rather than the lock failing."""
    from kit.tiers.unit.refusals import REFUSALS

    try:
        return module_samples(name, dtype, mode != EVAL)
    except REFUSALS:
        return ()


def _settings(config: UnitConfig) -> Modules:
    if config.modules is None:
        raise InputError(f"{config.source}: no modules section: the standard runs no module "
                         "test")
    return config.modules


def _sample(config: UnitConfig, test_id: str) -> tuple[ModuleId, Any]:
    settings = _settings(config)
    module_id = ModuleId.of(test_id)
    info = module_info(module_id.module)
    declared = declared_dtypes(info)
    if module_id.dtype not in settings.dtypes or module_id.dtype not in declared or \
            module_id.mode not in modes(info):
        raise NoSuchSample(f"{test_id}: no such module test; regenerate the list with "
                           "`ckit standard lock`")
    found = module_samples(info.name, module_id.dtype, module_id.training)
    if module_id.sample >= len(found) or not _runs(found[module_id.sample], module_id.mode):
        raise NoSuchSample(f"{test_id}: {info.name} has no such sample on torch "
                           f"{torch.__version__}; regenerate the list with `ckit standard lock`")
    return module_id, found[module_id.sample]


def channels_last(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` in the channels-last format of its rank (as it is where its rank has none)."""
    layout = MEMORY_FORMATS.get(tensor.dim())
    return tensor if layout is None else tensor.contiguous(memory_format=layout)


def _in_default_dtype(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.to(torch.get_default_dtype()) if tensor.is_floating_point() else tensor


def _template(info: Any, sample: Any, module_id: ModuleId) -> torch.nn.Module:
    """The module on CPU in the tested dtype, its parameters initialized under a seed from the
    test id; a lazy module materialized by a forward on the sample."""
    constructor = sample.constructor_input
    with seeded_rngs(seed_of(module_id.test_id)), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = info.module_cls(*constructor.args, **constructor.kwargs).train(
            module_id.training)
        if info.is_lazy:
            # Materialized from the input's shape in the default dtype the module was built
            # in, then converted with the rest: the same initial values in every dtype.
            arguments = map_tensors(_forward_arguments(sample), _in_default_dtype)
            with torch.no_grad():
                module(*arguments[0], **arguments[1])
        module = module.to(TORCH_DTYPES[module_id.dtype])
    if module_id.mode == CHANNELS_LAST:
        # Each parameter by its own rank: a 3-d convolution's unbatched input is 4-d.
        for tensor in (*module.parameters(), *module.buffers()):
            tensor.data = channels_last(tensor.data)
    return module


def _grad_outputs(template: torch.nn.Module, forward: Any, constants: tuple[str, ...],
                  test_id: str) -> dict[str, torch.Tensor]:
    """A seeded ``grad_output`` (uniform in [-1, 1], drawn in float64 and rounded once to the
    output's dtype) per differentiable output of the forward on CPU, by its place."""
    probe = copy.deepcopy(template)  # the forward may update its buffers
    generator = torch.Generator().manual_seed(seed_of(test_id, "grad_output"))
    with torch.enable_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, _, attached = attach(forward, constants)
        output = probe(*attached[0], **attached[1])
    return {where: (torch.rand(leaf.shape, generator=generator, dtype=torch.float64) * 2 - 1
                    ).to(leaf.dtype)
            for where, leaf in tensor_leaves(output, "output") if leaf.requires_grad}


def module_unit_case(config: UnitConfig, test_id: str) -> UnitCase:
    """The inputs and call of one module test, rebuilt identically in any process."""
    module_id, sample = _sample(config, test_id)
    info = module_info(module_id.module)
    laid_out = module_id.mode == CHANNELS_LAST
    template = _template(info, sample, module_id)
    arguments = _forward_arguments(sample)
    forward = map_tensors(arguments, channels_last) if laid_out else arguments
    # Differentiated: the inputs the ModuleInfo makes require grad (never a loss's target).
    constants = tuple(where for where, t in tensor_leaves(arguments) if not t.requires_grad)
    state = {name: tensor.detach() for name, tensor in template.state_dict().items()}
    grad_outputs = _grad_outputs(template, forward, constants, test_id)

    def make_inputs(device: str, upcast: bool) -> dict[str, Any]:
        def placed(tensor: torch.Tensor) -> torch.Tensor:
            return place_exact(tensor, device, upcast)

        return {"forward": map_tensors(forward, placed), "state": map_tensors(state, placed),
                "grad_outputs": map_tensors(grad_outputs, placed)}

    def call(device: str, upcast: bool, inputs: Mapping[str, Any]) -> dict[str, Any]:
        dtype = torch.float64 if upcast else TORCH_DTYPES[module_id.dtype]
        module = copy.deepcopy(template).to(device=device, dtype=dtype)
        holding(module, inputs["state"])
        return forward_backward(module, inputs, constants)

    label = f"module {info.name} sample {module_id.sample} ({sample.desc or 'no description'})" \
            f", {module_id.mode}"
    # The gradients' scale is at least the largest |grad_output|, as the backward variant's
    # (``gradient_comparison``): a backward multiplies by it.
    comparison = replace(_settings(config).comparison,
                         scale_floor=largest(tuple(grad_outputs.values())))
    return UnitCase(label, module_id.dtype, comparison, make_inputs, call,
                    extra_operands=tuple(grad_outputs.values()),
                    observe=_memory_format_facts if laid_out else None, repeatable=False)


def holding(module: torch.nn.Module, state: Mapping[str, torch.Tensor]) -> None:
    """``module`` with copies of ``state``'s tensors as its parameters and buffers, set as
    attributes: ``load_state_dict`` swaps a tensor subclass's parameters in place, which a
    recurrent layer's weak references to its weights refuse."""
    for name, value in state.items():
        path, _, leaf = name.rpartition(".")
        owner = module.get_submodule(path)
        parameter = owner._parameters.get(leaf)
        copied = value.detach().clone()
        setattr(owner, leaf, copied if parameter is None else
                torch.nn.Parameter(copied, requires_grad=parameter.requires_grad))


def forward_backward(module: torch.nn.Module, inputs: Mapping[str, Any],
                     constants: tuple[str, ...]) -> dict[str, Any]:
    """The module's forward on the inputs, then its backward from their ``grad_outputs``: the
    output, each floating input's and parameter's gradient, and the buffers after the call."""
    with torch.enable_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        names, leaves, (args, kwargs) = attach(inputs["forward"], constants)
        output = module(*args, **kwargs)
        placed = dict(tensor_leaves(output, "output"))
        wanted = inputs["grad_outputs"]
        torch.autograd.backward([placed[where] for where in wanted],
                                [wanted[where] for where in wanted])
    grads = {f"grad of {name}": _grad_of(leaf) for name, leaf in zip(names, leaves, strict=True)}
    grads.update({f"grad of {name}": _grad_of(param)
                  for name, param in module.named_parameters()})
    return {"output": map_tensors(output, lambda t: t.detach()), **grads,
            "buffers": {name: buffer.detach() for name, buffer in module.named_buffers()}}


def _grad_of(leaf: torch.Tensor) -> torch.Tensor:
    # No gradient reached it (it does not matter to the result): zero, as autograd defines it.
    return leaf.grad.detach() if leaf.grad is not None else torch.zeros_like(leaf)


def _memory_format_facts(inputs: Any, result: Mapping[str, Any]) -> tuple[Fact, ...]:
    """What a channels-last case observes: per output and input gradient, whether it is
    contiguous, and in the channels-last format of its rank (where it has one)."""
    observed = [(key, value) for key, value in result.items()
                if key == "output" or key.startswith(("grad of args", "grad of kwargs"))]
    return tuple(Fact(f"{where}'s memory format (contiguous, channels-last)",
                      "wrong-memory-format", _layout_of(tensor))
                 for key, value in observed for where, tensor in tensor_leaves(value, key))


def _layout_of(tensor: torch.Tensor) -> tuple[bool, bool]:
    layout = MEMORY_FORMATS.get(tensor.dim())
    return (tensor.is_contiguous(),
            layout is not None and tensor.is_contiguous(memory_format=layout))


def module_arguments(test_id: str) -> Any:
    """What a module test binds outside its inputs, for its input digest: the module, its
    constructor's arguments and the mode."""
    module_id = ModuleId.of(test_id)
    found = module_samples(module_id.module, module_id.dtype, module_id.training)
    constructor = found[module_id.sample].constructor_input
    return (module_id.module, constructor.args, dict(constructor.kwargs), module_id.mode)
