"""The YAML op spec format: parsing and validating one spec file into templates.

The format is documented in the header of every spec in ``standards/<v>/ops/``. Every problem is
a one-line ``InputError`` naming the file and the field, e.g.
``ops/layer_norm.yaml: templates.layer_norm_module.inputs[0].shape: 'Q' is neither a size nor a
dim or var name``.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from kit.config_reader import Node
from kit.errors import InputError
from kit.tiers.unit import composites
from kit.tiers.unit.config import COMPARISON_FIELDS, Comparison, parse_comparison
from kit.tiers.unit.dtypes import UNIT_DTYPES, parse_dtypes

#: The name standards give the kit's own composites. It is part of the standard's text (and of
#: each case's locked input digest), so it stays fixed wherever the module lives.
COMPOSITES_NAME = "kit.unit.composites."
#: Call targets a spec may name: torch's public API and the kit's own composites.
ALLOWED_TARGET_PREFIXES = ("torch.", COMPOSITES_NAME)
LAYOUTS = ("contiguous", "transposed", "strided", "expanded", "channels_last")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ID_SEGMENT = re.compile(r"[A-Za-z0-9_.+-]+\Z")
_SPEC_KEYS = {"dims", "presets", "templates"}
_TEMPLATE_KEYS = {
    "call",
    "module",
    "init",
    "inputs",
    "args",
    "kwargs",
    "vars",
    "dtypes",
    "cases",
    *COMPARISON_FIELDS,
}
_INPUT_KEYS = {"shape", "dtype", "low", "high", "layout", "name"}


@dataclass(frozen=True)
class InputSpec:
    #: Sizes: ints, or names of dims or vars.
    shape: tuple[int | str, ...]
    #: None: the tested dtype.
    dtype: str | None
    low: float | str | None
    high: float | str | None
    layout: str
    #: Passed by keyword when set, else positionally in order.
    name: str | None


@dataclass(frozen=True)
class Template:
    name: str
    source: Path
    target: str
    is_module: bool
    init_args: tuple[Any, ...]
    init_kwargs: Mapping[str, Any]
    #: Refill the module's parameters from U(-1, 1) (seeded), instead of its own init
    #: (LayerNorm starts at ones and zeros, which would leave the affine part untested).
    randomize: bool
    inputs: tuple[InputSpec, ...]
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]
    vars: Mapping[str, tuple[Any, ...]]
    dtypes: tuple[str, ...]
    cases: tuple[str, ...]
    presets: Mapping[str, Mapping[str, int]]
    comparison: Comparison


def parse_op_spec(data: Any, source: Path) -> list[Template]:
    where = str(source)
    if not isinstance(data, dict):
        raise InputError(f"{where}: expected a mapping with dims, presets and templates")
    _reject_unknown(data, _SPEC_KEYS, where)
    dims = _parse_dims(data.get("dims"), f"{where}: dims")
    presets = _parse_presets(data.get("presets"), dims, f"{where}: presets")
    raw_templates = data.get("templates")
    if not isinstance(raw_templates, dict) or not raw_templates:
        raise InputError(f"{where}: templates: expected a non-empty mapping name -> template")
    return [
        _parse_template(str(name), raw, dims, presets, source)
        for name, raw in raw_templates.items()
    ]


def _parse_dims(raw: Any, where: str) -> tuple[str, ...]:
    if not isinstance(raw, dict) or not raw:
        raise InputError(f"{where}: expected a mapping of dim names to descriptions")
    for name in raw:
        if not isinstance(name, str) or not _NAME.match(name):
            raise InputError(f"{where}: {name!r} is not a valid dim name")
    return tuple(raw)


def _parse_presets(raw: Any, dims: tuple[str, ...], where: str) -> dict[str, dict[str, int]]:
    if not isinstance(raw, dict) or not raw:
        raise InputError(f"{where}: expected a mapping of preset names to dim sizes")
    presets = {}
    for name, sizes in raw.items():
        here = f"{where}.{name}"
        if not isinstance(name, str) or not _ID_SEGMENT.match(name) or "-" in name:
            raise InputError(f"{here}: preset names use letters, digits, '_' and '.'")
        if not isinstance(sizes, dict) or set(sizes) != set(dims):
            raise InputError(f"{here}: expected a size for each dim of {list(dims)}")
        for dim, size in sizes.items():
            if not isinstance(size, int) or isinstance(size, bool) or size < 0:
                raise InputError(f"{here}.{dim}: expected a size >= 0, got {size!r}")
        presets[name] = dict(sizes)
    return presets


def _parse_template(
    name: str, raw: Any, dims: tuple[str, ...], presets: dict[str, dict[str, int]], source: Path
) -> Template:
    where = f"{source}: templates.{name}"
    if not _NAME.match(name):
        raise InputError(f"{where}: template names use letters, digits and '_'")
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected a mapping")
    _reject_unknown(raw, _TEMPLATE_KEYS, where)
    target, is_module = _parse_target(raw, where)
    variables = _parse_vars(raw.get("vars", {}), dims, f"{where}.vars")
    dtypes = parse_dtypes(Node.within(raw.get("dtypes"), f"{where}.dtypes"))
    names = set(dims) | set(variables)
    init = raw.get("init", {})
    if not isinstance(init, dict) or set(init) - {"args", "kwargs", "randomize"}:
        raise InputError(f"{where}.init: expected a mapping with args, kwargs and/or randomize")
    if not isinstance(init.get("randomize", False), bool):
        raise InputError(f"{where}.init.randomize: expected true or false")
    if init and not is_module:
        raise InputError(f"{where}.init: only a module template has constructor arguments")
    cases = raw.get("cases")
    if not isinstance(cases, list) or not cases:
        raise InputError(f"{where}.cases: expected a non-empty list of presets")
    for preset in cases:
        if preset not in presets:
            raise InputError(f"{where}.cases: unknown preset {preset!r}")
    return Template(
        name=name,
        source=source,
        target=target,
        is_module=is_module,
        init_args=_parse_args(init.get("args", []), names, f"{where}.init.args"),
        init_kwargs=_parse_kwargs(init.get("kwargs", {}), names, f"{where}.init.kwargs"),
        randomize=init.get("randomize", False),
        inputs=_parse_inputs(raw.get("inputs"), names, variables, f"{where}.inputs"),
        args=_parse_args(raw.get("args", []), names, f"{where}.args"),
        kwargs=_parse_kwargs(raw.get("kwargs", {}), names, f"{where}.kwargs"),
        vars=variables,
        dtypes=dtypes,
        cases=tuple(cases),
        presets={p: presets[p] for p in cases},
        comparison=parse_comparison(
            Node.within(raw, where).section(optional=_TEMPLATE_KEYS), dtypes
        ),
    )


def _parse_target(raw: Mapping[str, Any], where: str) -> tuple[str, bool]:
    if ("call" in raw) == ("module" in raw):
        raise InputError(f"{where}: give exactly one of call (a function) or module (a class)")
    field = "module" if "module" in raw else "call"
    target = raw[field]
    if not isinstance(target, str) or not target.startswith(ALLOWED_TARGET_PREFIXES):
        raise InputError(
            f"{where}.{field}: expected a dotted path under {' or '.join(ALLOWED_TARGET_PREFIXES)}"
        )
    resolved = resolve_target(target, f"{where}.{field}")
    if field == "module" and not (
        isinstance(resolved, type) and issubclass(resolved, torch.nn.Module)
    ):
        raise InputError(f"{where}.module: {target} is not a torch.nn.Module class")
    if field == "call" and not callable(resolved):
        raise InputError(f"{where}.call: {target} is not callable")
    return target, field == "module"


def resolve_target(path: str, where: str) -> Any:
    """Import the longest module prefix of ``path``, then follow attributes."""
    if path.startswith(COMPOSITES_NAME):
        path = composites.__name__ + "." + path.removeprefix(COMPOSITES_NAME)
    parts = path.split(".")
    for split in range(len(parts), 0, -1):
        try:
            value: Any = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        try:
            for attribute in parts[split:]:
                value = getattr(value, attribute)
        except AttributeError:
            break
        return value
    raise InputError(f"{where}: cannot resolve {path!r}")


def _parse_vars(raw: Any, dims: tuple[str, ...], where: str) -> dict[str, tuple[Any, ...]]:
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected a mapping of var names to lists of values")
    variables = {}
    for name, values in raw.items():
        here = f"{where}.{name}"
        if not isinstance(name, str) or not _NAME.match(name) or name in dims:
            raise InputError(f"{here}: var names are identifiers distinct from the dims")
        if not isinstance(values, list) or not values:
            raise InputError(f"{here}: expected a non-empty list of values")
        for value in values:
            if not isinstance(value, (bool, int, float, str)) and value is not None:
                raise InputError(f"{here}: values are numbers, booleans, strings or null")
            if not _ID_SEGMENT.match(f"{name}{format_value(value)}"):
                raise InputError(f"{here}: value {value!r} cannot appear in a test id")
        if len({format_value(v) for v in values}) != len(values):
            raise InputError(f"{here}: two values give the same test id")
        variables[name] = tuple(values)
    return variables


def _parse_inputs(
    raw: Any, names: set[str], variables: Mapping[str, tuple[Any, ...]], where: str
) -> tuple[InputSpec, ...]:
    if not isinstance(raw, list) or not raw:
        raise InputError(f"{where}: expected a non-empty list of inputs")
    return tuple(
        _parse_input(item, names, variables, f"{where}[{i}]") for i, item in enumerate(raw)
    )


def _parse_input(
    raw: Any, names: set[str], variables: Mapping[str, tuple[Any, ...]], where: str
) -> InputSpec:
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected a mapping with at least a shape")
    _reject_unknown(raw, _INPUT_KEYS, where)
    shape = raw.get("shape")
    if not isinstance(shape, list):
        raise InputError(f"{where}.shape: expected a list of sizes or dim names, e.g. [B, S, H]")
    for size in shape:
        _check_size(size, names, f"{where}.shape")
    dtype = raw.get("dtype")
    if dtype is not None and dtype not in UNIT_DTYPES:
        raise InputError(f"{where}.dtype: unknown dtype {dtype!r}")
    layout = raw.get("layout", "contiguous")
    for choice in _layout_choices(layout, variables, f"{where}.layout"):
        _check_layout_fits(choice, len(shape), f"{where}.layout")
    for bound in ("low", "high"):
        value = raw.get(bound)
        if value is not None and not (
            isinstance(value, (int, float)) and not isinstance(value, bool)
        ):
            _check_size(value, names, f"{where}.{bound}")
    name = raw.get("name")
    if name is not None and (not isinstance(name, str) or not _NAME.match(name)):
        raise InputError(f"{where}.name: expected a keyword argument name")
    return InputSpec(tuple(shape), dtype, raw.get("low"), raw.get("high"), layout, name)


def _layout_choices(
    layout: Any, variables: Mapping[str, tuple[Any, ...]], where: str
) -> tuple[Any, ...]:
    """The layouts an input can take: one, or the values of the var it references."""
    choices = (
        variables.get(layout[1:], ())
        if isinstance(layout, str) and layout.startswith("$")
        else (layout,)
    )
    if not choices or not all(c in LAYOUTS for c in choices):
        raise InputError(
            f"{where}: expected one of {list(LAYOUTS)} or a var of them, got {layout!r}"
        )
    return choices


def _check_layout_fits(layout: str, ndim: int, where: str) -> None:
    needs = {"transposed": 2, "strided": 1, "expanded": 1, "channels_last": 4}.get(layout, 0)
    if ndim < needs or (layout == "channels_last" and ndim != 4):
        raise InputError(f"{where}: {layout} does not fit a {ndim}-d shape")


def _check_size(size: Any, names: set[str], where: str) -> None:
    if isinstance(size, int) and not isinstance(size, bool) and size >= 0:
        return
    if isinstance(size, str) and size in names:
        return
    raise InputError(f"{where}: {size!r} is neither a size nor a dim or var name")


def _parse_args(raw: Any, names: set[str], where: str) -> tuple[Any, ...]:
    if not isinstance(raw, list):
        raise InputError(f"{where}: expected a list")
    _check_references(raw, names, where)
    return tuple(raw)


def _parse_kwargs(raw: Any, names: set[str], where: str) -> dict[str, object]:
    if not isinstance(raw, dict) or not all(isinstance(k, str) and _NAME.match(k) for k in raw):
        raise InputError(f"{where}: expected a mapping of keyword names to values")
    _check_references(raw, names, where)
    return dict(raw)


def _check_references(value: Any, names: set[str], where: str) -> None:
    """``$name`` strings must name a dim or var (``$$`` escapes a literal ``$``)."""
    if isinstance(value, str) and value.startswith("$") and not value.startswith("$$"):
        if value[1:] not in names:
            raise InputError(f"{where}: {value!r} names no dim or var")
    elif isinstance(value, list):
        for item in value:
            _check_references(item, names, where)
    elif isinstance(value, dict):
        for item in value.values():
            _check_references(item, names, where)


def _reject_unknown(raw: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(map(str, raw)) - allowed)
    if unknown:
        raise InputError(f"{where}: unknown field {unknown[0]!r} (allowed: {sorted(allowed)})")


def format_value(value: Any) -> str:
    """A var value as it appears in a test id: ``1e-05``, ``-1``, ``True``, ``tanh``."""
    if isinstance(value, float):
        return format(value, "g")
    return str(value)
