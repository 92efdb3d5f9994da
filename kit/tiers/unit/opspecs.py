"""YAML op specs: unit cases for what OpInfo covers poorly (modules, composites, layouts, sizes).

One spec per file in the standard's ``ops/`` directory. The format is documented in the header
of each spec file; in short::

    dims: {B: batch, S: sequence, H: hidden}         # named sizes, with a description
    presets:                                         # named assignments of every dim
      small: {B: 2, S: 3, H: 8}
      odd: {B: 3, S: 7, H: 33}
    templates:
      layer_norm_module:                             # the <template> segment of the ids
        module: torch.nn.LayerNorm                   # or call: torch.nn.functional.layer_norm
        init: {args: [$H], kwargs: {eps: $eps}}      # constructor arguments (module only)
        inputs:                                      # positional, or by keyword with `name`
          - {shape: [B, S, H], layout: transposed}
        args: []                                     # more positional arguments, after inputs
        kwargs: {}                                   # keyword arguments
        vars: {eps: [1.0e-5, 1.0e-3]}                # cartesian product of the value lists
        dtypes: [float32, bfloat16]
        cases: [small, odd]                          # presets to run
        tolerance: {bfloat16: {atol: .., rtol: .., why: ..}}   # optional, as in unit.yaml

Ids: ``unit/opspec/<template>/<dtype>/<preset>[-<var><value>...]``, e.g.
``unit/opspec/layer_norm_module/float32/odd-eps1e-05``. Inputs are seeded from the id.
"""

from __future__ import annotations

import copy
import functools
import itertools
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from kit.errors import InputError
from kit.test_ids import TestId
from kit.tiers.unit.checking import UnitCase
from kit.tiers.unit.config import UnitConfig
from kit.tiers.unit.opspec_format import (
    InputSpec,
    Template,
    format_value,
    parse_op_spec,
    resolve_target,
)
from kit.tiers.unit.seeding import seeded_rngs
from kit.tiers.unit.trees import TORCH_DTYPES
from kit.yamlio import load_yaml

PREFIX = "unit/opspec/"


@dataclass(frozen=True)
class OpSpecCase:
    template: Template
    dtype: str
    preset: str
    #: Every dim of the preset and the value of every var.
    bindings: Mapping[str, Any]
    case: str

    @property
    def test_id(self) -> str:
        return f"{PREFIX}{self.template.name}/{self.dtype}/{self.case}"


# --- loading and validation ----------------------------------------------------------------


def load_op_specs(directory: Path, *inherited: Path) -> dict[str, Template]:
    """Every template of every ``*.yaml`` spec in ``directory`` and the ``inherited``
    directories, by template name; a spec file name is taken from the first that holds it."""
    by_name: dict[str, Path] = {}
    for source in (directory, *inherited):
        for path in sorted(source.glob("*.yaml")) if source.is_dir() else []:
            by_name.setdefault(path.name, path)
    files = [by_name[name] for name in sorted(by_name)]
    stamp = tuple((path, path.stat().st_mtime_ns) for path in files)
    return dict(_load_cached(stamp))


@functools.lru_cache(maxsize=8)
def _load_cached(stamp: tuple[tuple[Path, int], ...]) -> tuple[tuple[str, Template], ...]:
    templates: dict[str, Template] = {}
    for path, _ in stamp:
        for template in parse_op_spec(load_yaml(path), path):
            if template.name in templates:
                other = templates[template.name].source.name
                raise InputError(f"{path}: templates.{template.name}: name already used in {other}")
            templates[template.name] = template
    return tuple(templates.items())


# --- expansion -----------------------------------------------------------------------------


def expand(template: Template) -> list[OpSpecCase]:
    """Every case of ``template``: dtypes x presets x the cartesian product of its vars."""
    names = list(template.vars)
    combos = list(itertools.product(*(template.vars[n] for n in names)))
    cases = []
    for dtype in template.dtypes:
        for preset in template.cases:
            for combo in combos:
                values = dict(zip(names, combo, strict=True))
                label = "-".join([preset, *(f"{n}{format_value(v)}" for n, v in values.items())])
                bindings = {**template.presets[preset], **values}
                cases.append(OpSpecCase(template, dtype, preset, bindings, label))
    return cases


def opspec_test_ids(config: UnitConfig) -> list[str]:
    templates = load_op_specs(*config.op_specs_dirs)
    return [case.test_id for t in templates.values() for case in expand(t)]


def find_case(config: UnitConfig, test_id: str) -> OpSpecCase:
    parsed = TestId.read(test_id, ("unit",))
    if parsed is None or len(parsed.segments) != 4 or f"{parsed.prefix(1)}/" != PREFIX:
        raise InputError(
            f"not an op spec test id: {test_id!r} (expected {PREFIX}TEMPLATE/DTYPE/CASE)"
        )
    template = load_op_specs(*config.op_specs_dirs).get(parsed.segments[1])
    if template is not None:
        for case in expand(template):
            if case.test_id == test_id:
                return case
    raise InputError(
        f"{test_id}: no such op spec case; regenerate the list with `ckit standard lock`"
    )


# --- running -------------------------------------------------------------------------------


@dataclass(frozen=True)
class PreparedInput:
    """An input's storage, made on CPU; its layout is applied on the device the call runs on,
    so a transposed, strided or expanded input keeps its strides there."""

    storage: torch.Tensor
    shape: tuple[int, ...]
    layout: str
    name: str | None

    def on(self, device: str, upcast: bool) -> torch.Tensor:
        storage = self.storage
        if upcast and storage.is_floating_point():
            storage = storage.to(torch.float64)
        storage = storage.to(device, copy=True)
        if self.layout == "transposed":
            return storage.transpose(-1, -2)
        if self.layout == "strided":
            return storage[..., ::2]
        if self.layout == "expanded":
            return storage.expand(self.shape)
        if self.layout == "channels_last":
            return storage.permute(0, 3, 1, 2)
        return storage


def storage_shape(shape: tuple[int, ...], layout: str) -> tuple[int, ...]:
    """The shape of the memory behind an input of ``shape`` seen through ``layout``."""
    if layout == "transposed":
        return (*shape[:-2], shape[-1], shape[-2])
    if layout == "strided":
        return (*shape[:-1], shape[-1] * 2)
    if layout == "expanded":
        return (1, *shape[1:])
    if layout == "channels_last":
        return (shape[0], shape[2], shape[3], shape[1])
    return shape


def _resolve(value: Any, bindings: Mapping[str, Any]) -> Any:
    if isinstance(value, str) and value.startswith("$$"):
        return value[1:]
    if isinstance(value, str) and value.startswith("$"):
        return bindings[value[1:]]
    if isinstance(value, (list, tuple)):
        return [_resolve(v, bindings) for v in value]
    if isinstance(value, Mapping):
        return {k: _resolve(v, bindings) for k, v in value.items()}
    return value


def _size(value: float | str, bindings: Mapping[str, Any]) -> Any:
    """A size or bound: a number as is, or the value of the dim or var it names."""
    return bindings[value] if isinstance(value, str) else value


def make_input(
    spec: InputSpec, dtype: str, bindings: Mapping[str, Any], generator: torch.Generator
) -> PreparedInput:
    shape = tuple(int(_size(s, bindings)) for s in spec.shape)
    torch_dtype = TORCH_DTYPES[spec.dtype or dtype]
    layout = _resolve(spec.layout, bindings)
    size = storage_shape(shape, layout)
    floating = torch_dtype.is_floating_point
    low = _size(spec.low if spec.low is not None else (-1.0 if floating else 0), bindings)
    high = _size(spec.high if spec.high is not None else (1.0 if floating else 2), bindings)
    if floating:
        # Drawn in float64 and rounded once, so the upcast reference sees the very same values.
        values = torch.rand(size, generator=generator, dtype=torch.float64) * (high - low) + low
        storage = values.to(torch_dtype)
    else:
        storage = torch.randint(int(low), int(high), size, generator=generator).to(torch_dtype)
    return PreparedInput(storage, shape, layout, spec.name)


def opspec_unit_case(config: UnitConfig, test_id: str) -> UnitCase:
    """The inputs and call of one op spec test, rebuilt identically in any process."""
    case = find_case(config, test_id)
    template = case.template
    seed = zlib.crc32(test_id.encode())
    generator = torch.Generator().manual_seed(seed)
    inputs = [make_input(spec, case.dtype, case.bindings, generator) for spec in template.inputs]
    args = _resolve(list(template.args), case.bindings)
    kwargs = _resolve(dict(template.kwargs), case.bindings)
    function = _callable_for(template, case, generator)

    def make_inputs(device: str, upcast: bool) -> Any:
        positional = [i.on(device, upcast) for i in inputs if i.name is None]
        named = {i.name: i.on(device, upcast) for i in inputs if i.name is not None}
        return positional, named

    def call_with(target: Any, prepared: Any) -> Any:
        positional, named = prepared
        return target(*positional, *args, **named, **kwargs)

    def call(device: str, upcast: bool, prepared: Any) -> Any:
        return call_with(function(device, upcast), prepared)

    label = f"op spec {template.name} {case.case}"
    # A module's parameters count among the operands it accumulates over (a linear's fan-in).
    operands = function("cpu", False) if template.is_module else ()
    on_module = call_with if template.is_module else None
    return UnitCase(label, case.dtype, template.comparison, make_inputs, call, operands, on_module)


def _callable_for(
    template: Template, case: OpSpecCase, generator: torch.Generator
) -> Callable[[str, bool], Any]:
    """``(device, upcast) -> callable``: the function, or a fresh copy of the seeded module."""
    target = resolve_target(template.target, f"{template.source}: templates.{template.name}")
    if not template.is_module:
        return lambda device, upcast: target
    with seeded_rngs(int(torch.randint(0, 2**31 - 1, (), generator=generator))):
        module = target(
            *_resolve(list(template.init_args), case.bindings),
            **_resolve(dict(template.init_kwargs), case.bindings),
        )
    if template.randomize:
        with torch.no_grad():
            for parameter in module.parameters():
                parameter.uniform_(-1.0, 1.0, generator=generator)
    if TORCH_DTYPES[case.dtype].is_floating_point:
        module = module.to(TORCH_DTYPES[case.dtype])
    module.eval()

    def placed(device: str, upcast: bool) -> Any:
        copy_ = copy.deepcopy(module)
        if upcast:
            copy_ = copy_.to(torch.float64)
        return copy_.to(device)

    return placed
