"""``large``: the reduced or contracted dimension grown to the declared length (>= 256), with
fresh values, so blocked and multi-pass reduction paths run."""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from kit.errors import InputError
from kit.tiers.unit.samples import numel_of_sample
from kit.tiers.unit.variants.interface import Candidate, VariantKind, VariantSource
from kit.tiers.unit.variants.rules import (
    SAMPLE_DIM,
    Groups,
    GrownDims,
    VariantRule,
    count,
    dtype_list,
    is_int,
    members,
    reject_unknown,
)

#: The most tensor elements a candidate may hold once grown: variants stay unit-sized.
MAX_NUMEL = 1 << 15
_FIELDS = {"length", "dims", "dtypes"}


class Large(VariantKind):
    name = "large"
    summary = "the sample's reduced or contracted dimension grown to `length`, fresh values"

    def rule(self, rule_name: str, raw: Mapping[str, Any], where: str, groups: Groups
             ) -> VariantRule:
        """``length`` and per op (or group) ``dims``: the dimension grown per operand."""
        reject_unknown(raw, _FIELDS, where)
        size = count(raw.get("length"), 2, f"{where}.length", "the grown dimensions' size")
        dims = _grown_dims(raw.get("dims"), f"{where}.dims", groups)
        ops = tuple(key for key, _ in dims)
        return VariantRule(rule_name, self.name, ops, dtype_list(raw.get("dtypes"),
                           f"{where}.dtypes"), dims, size)

    def candidates(self, source: VariantSource) -> Iterator[Candidate]:
        """The sample with the most elements once grown (within ``MAX_NUMEL``) first."""
        grown_dims = source.rule.grown_dims(source.entry.key)
        growths = [
            growth
            for sample in source.samples
            if (growth := _growth(sample, grown_dims, source.rule.size)) is not None
            and growth.numel <= MAX_NUMEL
        ]
        growths.sort(key=lambda g: -g.numel)  # stable: OpInfo's order among equals
        for growth in growths:
            yield functools.partial(_grown_sample, growth)


def _grown_dims(raw: Any, where: str, groups: Groups) -> tuple[tuple[str, GrownDims], ...]:
    if not isinstance(raw, dict) or not raw:
        raise InputError(f"{where}: expected a mapping of op or group to its grown dimensions")
    found: dict[str, GrownDims] = {}
    for name, dims in raw.items():
        here = f"{where}.{name}"
        if not isinstance(dims, list) or not dims or not all(map(_is_dim_token, dims)):
            raise InputError(
                f"{here}: expected one entry per operand: a dimension index, "
                f"{SAMPLE_DIM!r} or null, e.g. [-1, -2]"
            )
        for key in members(name, groups, here):
            if key in found:
                raise InputError(f"{here}: op {key!r} is given grown dimensions twice")
            found[key] = tuple(dims)
    return tuple(found.items())


def _is_dim_token(value: Any) -> bool:
    return value is None or value == SAMPLE_DIM or is_int(value)


@dataclass(frozen=True)
class _Growth:
    """One sample with its reduced or contracted dimensions grown."""

    sample: Any
    #: (positional operand, its dimension, the size it grows to), per grown operand.
    dims: tuple[tuple[int, int, int], ...]
    #: The elements of all the sample's tensors once grown.
    numel: int


def _growth(sample: Any, grown_dims: GrownDims, length: int) -> _Growth | None:
    positional = (sample.input, *sample.args)
    if len(grown_dims) > len(positional):
        return None
    found: list[tuple[int, int]] = []
    for position, token in enumerate(grown_dims):
        if token is None:
            continue
        operand = positional[position]
        if not isinstance(operand, torch.Tensor) or operand.dim() == 0:
            return None
        dim = _sample_dim(sample, operand.dim()) if token == SAMPLE_DIM else int(token)
        if not -operand.dim() <= dim < operand.dim() or operand.shape[dim] == 0:
            return None
        found.append((position, dim % operand.dim()))
    if not found:
        return None
    smallest = min(positional[p].shape[d] for p, d in found)
    factor = math.ceil(length / smallest)
    dims = tuple((p, d, positional[p].shape[d] * factor) for p, d in found)
    numel = numel_of_sample(sample) + sum(positional[p].numel() * (factor - 1) for p, _ in found)
    return _Growth(sample, dims, numel)


def _sample_dim(sample: Any, ndim: int) -> int:
    """The dimension a reduction or scan sample works along: its ``dim`` (keyword, or the
    first integer or tuple positional argument after the input); the last for a full
    reduction."""
    raw = sample.kwargs.get("dim")
    if "dim" not in sample.kwargs:
        raw = next((a for a in sample.args if _is_dim_value(a)), None)
    if isinstance(raw, (tuple, list)):
        raw = raw[0] if raw else None
    return ndim - 1 if raw is None else int(raw)


def _is_dim_value(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, (tuple, list)) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    )


def _grown_sample(growth: _Growth) -> Any:
    from torch.testing import make_tensor
    from torch.testing._internal.opinfo.core import SampleInput

    positional = list((growth.sample.input, *growth.sample.args))
    for position, dim, size in growth.dims:
        operand = positional[position]
        shape = list(operand.shape)
        shape[dim] = size
        positional[position] = make_tensor(shape, dtype=operand.dtype, device="cpu")
    return SampleInput(
        positional[0], args=tuple(positional[1:]), kwargs=dict(growth.sample.kwargs)
    )
