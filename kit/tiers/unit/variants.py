"""Variants: samples beyond OpInfo's defaults, built from an op's own OpInfo samples.

OpInfo's samples are what its authors found representative, not what breaks kernels: the
unit tier adds, per op and dtype, the variants ``unit.yaml``'s ``coverage`` section declares
(``kit.tiers.unit.coverage``):

- ``empty``: a sample whose tensors get a zero-size dimension (an abort on empty input);
- ``noncontiguous``: every tensor transposed and/or strided with gaps holding NaN (or 12, or
  True), placed on the device with exactly those strides; only where none of the op's tested
  samples reaches the device non-contiguous;
- ``expanded``: the input replaced by one slice of it, expanded back (a stride-0 dimension, as
  broadcasting views hand kernels);
- ``large``: the reduced or contracted dimension grown to the declared length (>= 256), with
  fresh values, so blocked and multi-pass reduction paths run;
- ``extremes``: integer tensors holding values at and next to the dtype's min and max, mixed
  with small ones, so a saturating or widening kernel differs from CPU's wrapping one;
- ``arity<N>``: a variadic op (cat, stack) given N inputs with fresh values.

Each variant has candidates in a fixed order of preference, each built under a seed from
(op, dtype, variant, candidate); the variant is the first candidate the CPU reference accepts,
and there is none (no test) when CPU accepts none of them. Every process rebuilds the same one.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch.testing._internal.common_utils import noncontiguous_like

from kit.tiers.unit.config import OpEntry
from kit.tiers.unit.coverage import SAMPLE_DIM, GrownDims, VariantRule
from kit.tiers.unit.samples import (
    call_arguments,
    cpu_accepts,
    numel_of_sample,
    opinfo_samples,
    sample_case,
    seed_of,
    tensors_of,
    transform_tensors,
)
from kit.tiers.unit.seeding import seeded_rngs
from kit.tiers.unit.trees import TORCH_DTYPES, map_tensors, tensor_leaves, to_device

#: The most tensor elements a variant's candidate may hold: variants stay unit-sized.
MAX_NUMEL = {"large": 1 << 15, "noncontiguous": 1 << 12, "expanded": 1 << 12, "extremes": 1 << 12}
#: How many values next to each integer limit ``extremes`` draws from (min .. min+k-1).
EXTREME_SPAN = 5

#: A candidate: builds the sample (under the candidate's seed), or None if it does not fit.
Candidate = Callable[[], Any]


@dataclass(frozen=True)
class VariantSource:
    """What a variant is built from: the op's OpInfo samples in one dtype."""

    entry: OpEntry
    dtype: str
    rule: VariantRule
    #: Every OpInfo sample of the op in ``dtype``.
    samples: tuple[Any, ...]
    #: The positions of the samples the standard runs.
    tested: tuple[int, ...]

    @property
    def torch_dtype(self) -> torch.dtype:
        return TORCH_DTYPES[self.dtype]


#: Built variants by (op name, OpInfo variant, dtype, rule, tested positions): a worker runs
#: each once, but ``ckit standard lock`` asks for every one several times.
_BUILT: dict[tuple[str, str, str, VariantRule, tuple[int, ...]], Any] = {}


def variant_sample(entry: OpEntry, dtype: str, rule: VariantRule, tested: tuple[int, ...]) -> Any:
    """The variant's sample, or None where CPU accepts none of its candidates."""
    key = (entry.name, entry.variant, dtype, rule, tested)
    if key not in _BUILT:
        _BUILT[key] = _build(entry, dtype, rule, tested)
    return _BUILT[key]


def _build(entry: OpEntry, dtype: str, rule: VariantRule, tested: tuple[int, ...]) -> Any:
    source = VariantSource(entry, dtype, rule, opinfo_samples(entry, dtype), tested)
    label = f"{entry.key} {rule.name}"
    for number, candidate in enumerate(BUILDERS[rule.kind](source)):
        with seeded_rngs(seed_of(f"{entry.name}.{entry.variant}", dtype, rule.name, str(number))):
            sample = candidate()
        if sample is not None and cpu_accepts(
            sample_case(entry, dtype, sample, label, exact_layout=True)
        ):
            return sample
    return None


# --- empty ------------------------------------------------------------------------------------


def _empty(source: VariantSource) -> Iterator[Candidate]:
    """Per sample in OpInfo's order: the input's first dimension emptied, then every tensor's
    first dimension, then every tensor's last (broadcasting operands line up from the right)."""
    for sample in source.samples:
        yield functools.partial(_emptied, sample, inputs_only=True, dim=0)
        yield functools.partial(_emptied, sample, inputs_only=False, dim=0)
        yield functools.partial(_emptied, sample, inputs_only=False, dim=-1)


def _emptied(sample: Any, *, inputs_only: bool, dim: int) -> Any:
    def empty(t: torch.Tensor) -> torch.Tensor:
        return t.narrow(dim, 0, 0).clone() if t.dim() > 0 else t.clone()

    if inputs_only:
        made = transform_tensors(sample, lambda t: t.clone())
        made.input = map_tensors(sample.input, empty)
    else:
        made = transform_tensors(sample, empty)
    changed = any(
        a.numel() == 0 and b.numel() > 0
        for a, b in zip(tensors_of(made), tensors_of(sample), strict=True)
    )
    return made if changed else None


# --- noncontiguous ----------------------------------------------------------------------------


def _noncontiguous(source: VariantSource) -> Iterator[Candidate]:
    """The largest samples first, every tensor scattered; nothing if the op's tested samples
    already reach the device non-contiguous."""
    if any(_reaches_device_noncontiguous(source.samples[i]) for i in source.tested):
        return
    for sample in _largest_first(source.samples, MAX_NUMEL["noncontiguous"]):
        yield functools.partial(_scattered_sample, sample)


def _reaches_device_noncontiguous(sample: Any) -> bool:
    # What tested samples go through: ``to_device`` keeps dense layouts and closes gaps.
    moved = to_device(call_arguments(sample), "cpu")
    return any(not t.is_contiguous() for _, t in tensor_leaves(moved))


def _scattered_sample(sample: Any) -> Any:
    made = transform_tensors(sample, scattered)
    return made if any(not t.is_contiguous() for t in tensors_of(made)) else None


def scattered(tensor: torch.Tensor) -> torch.Tensor:
    """The same values, transposed in memory (2-D and up) and with a gap after every element
    (OpInfo's ``noncontiguous_like``: NaN, 12 or True in the gaps)."""
    if tensor.dim() == 0 or tensor.numel() == 0:
        return tensor.clone()
    if tensor.dim() == 1:
        return noncontiguous_like(tensor.clone())
    return noncontiguous_like(tensor.mT.contiguous()).mT


# --- expanded ---------------------------------------------------------------------------------


def _expanded(source: VariantSource) -> Iterator[Candidate]:
    """The largest samples first whose input is a tensor with a dimension longer than 1."""
    for sample in _largest_first(source.samples, MAX_NUMEL["expanded"]):
        if isinstance(sample.input, torch.Tensor) and any(n > 1 for n in sample.input.shape):
            yield functools.partial(_expanded_sample, sample)


def _expanded_sample(sample: Any) -> Any:
    """The input replaced by its first slice along its first dimension longer than 1, expanded
    back to its shape: the same slice repeated, through a stride of 0."""
    made = transform_tensors(sample, lambda t: t.clone())
    tensor = sample.input
    dim = next(d for d, size in enumerate(tensor.shape) if size > 1)
    made.input = tensor.narrow(dim, 0, 1).clone().expand(tensor.shape)
    return made


# --- large ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Growth:
    """One sample with its reduced or contracted dimensions grown."""

    sample: Any
    #: (positional operand, its dimension, the size it grows to), per grown operand.
    dims: tuple[tuple[int, int, int], ...]
    #: The elements of all the sample's tensors once grown.
    numel: int


def _large(source: VariantSource) -> Iterator[Candidate]:
    """The sample with the most elements once grown (within ``MAX_NUMEL``) first."""
    grown_dims = source.rule.grown_dims(source.entry.key)
    growths = [
        growth
        for sample in source.samples
        if (growth := _growth(sample, grown_dims, source.rule.size)) is not None
        and growth.numel <= MAX_NUMEL["large"]
    ]
    growths.sort(key=lambda g: -g.numel)  # stable: OpInfo's order among equals
    for growth in growths:
        yield functools.partial(_grown_sample, growth)


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


# --- extremes ---------------------------------------------------------------------------------


def _extremes(source: VariantSource) -> Iterator[Candidate]:
    """The largest samples first, their tensors of the tested dtype refilled with extremes."""
    dtype = source.torch_dtype
    for sample in _largest_first(source.samples, MAX_NUMEL["extremes"]):
        if any(t.dtype == dtype and t.numel() > 0 for t in tensors_of(sample)):
            yield functools.partial(_with_extremes, sample, dtype)


def _with_extremes(sample: Any, dtype: torch.dtype) -> Any:
    return transform_tensors(
        sample, lambda t: extreme_values(t) if t.dtype == dtype else t.clone()
    )


def extreme_values(like: torch.Tensor) -> torch.Tensor:
    """Values of ``like``'s integer dtype and shape: a third at and above its min, a third at
    and below its max, a third small (-2..2), drawn from torch's seeded generator."""
    info = torch.iinfo(like.dtype)
    kind = torch.randint(0, 3, like.shape)
    offset = torch.randint(0, EXTREME_SPAN, like.shape, dtype=torch.int64)
    low = torch.full(like.shape, info.min, dtype=torch.int64) + offset
    high = torch.full(like.shape, info.max, dtype=torch.int64) - offset
    small = offset - EXTREME_SPAN // 2
    values = torch.where(kind == 0, low, torch.where(kind == 1, high, small))
    return values.to(like.dtype)


# --- arity ------------------------------------------------------------------------------------


def _arity(source: VariantSource) -> Iterator[Candidate]:
    """Samples whose input is a list of non-empty tensors, the longest list first: N inputs
    with their shapes taken in turn from the list, and fresh values."""
    lists = [
        s
        for s in source.samples
        if isinstance(s.input, (list, tuple))
        and s.input
        and all(isinstance(t, torch.Tensor) and t.dim() > 0 and t.numel() > 0 for t in s.input)
    ]
    lists.sort(key=lambda s: -len(s.input))
    for sample in lists:
        yield functools.partial(_with_inputs, sample, source.rule.size)


def _with_inputs(sample: Any, count: int) -> Any:
    from torch.testing import make_tensor
    from torch.testing._internal.opinfo.core import SampleInput

    shapes = [t.shape for t in sample.input]
    dtype = sample.input[0].dtype
    tensors = [
        make_tensor(shapes[i % len(shapes)], dtype=dtype, device="cpu") for i in range(count)
    ]
    return SampleInput(tensors, args=tuple(sample.args), kwargs=dict(sample.kwargs))


# --- shared -----------------------------------------------------------------------------------


def _largest_first(samples: tuple[Any, ...], max_numel: int) -> list[Any]:
    fitting = [s for s in samples if 0 < numel_of_sample(s) <= max_numel]
    return sorted(fitting, key=lambda s: -numel_of_sample(s))  # stable: OpInfo's order


#: How each kind of variant makes its candidates.
BUILDERS: dict[str, Callable[[VariantSource], Iterator[Candidate]]] = {
    "empty": _empty,
    "noncontiguous": _noncontiguous,
    "expanded": _expanded,
    "large": _large,
    "extremes": _extremes,
    "arity": _arity,
}
