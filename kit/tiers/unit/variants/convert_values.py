"""The values of a conversion sample: per (source dtype, target dtype), by label, the values
that decide whether a conversion is right (``kit.tiers.unit.variants.convert``).

- 16-bit floats (float16, bfloat16) to anything: ``all``, every bit pattern (those a float to
  integer conversion defines: finite, truncating into the integer's range);
- float32/float64 to a narrower float: ``ties`` (values exactly halfway between two neighbours
  of the target, both parities of the lower one, and one step either side of them: round to
  nearest even, not toward zero nor half away) and ``range`` (the largest finite, the overflow
  threshold and just below it, beyond it, the target's subnormals and their ties, NaN, +-inf,
  +-0.0);
- float32 to float64: ``exact``; floats to integers: ``truncate`` (fractions of both signs,
  values next to the integer's limits; only values whose truncation is in range: the others
  are undefined in C++ and differ by CPU); anything to bool and integers to bool: ``nonzero``;
  integers to floats: ``rounding`` (integers past 2^p for the target's p bits of precision,
  ties among them, the limits); integers to integers: ``range``; bool to anything: ``bool``.

Every value gives the same answer on every CPU path (``ATEN_CPU_CAPABILITY``): values for a
16-bit target are float32 values, because PyTorch converts float64 to float16/bfloat16 through
float32 (rounding twice); integers converted to float32 stay within 2^53 (AVX2 converts int64
to float32 through float64) and to bfloat16 within 2^24 (through float32). Random values come
from ``torch.rand``/``randint`` and exact arithmetic only: ``randn`` and ``exp2`` differ in
their last bits between CPU paths, and the inputs must be the same on every machine.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import torch

#: A builder of one labelled part of a sample: values in the source dtype (under a seed).
Builder = Callable[[], torch.Tensor]
#: Random values per part.
PART = 64
SIXTEEN_BIT = (torch.float16, torch.bfloat16)
#: Bits of precision of the floating targets (the implicit one included).
PRECISION = {torch.float16: 11, torch.bfloat16: 8, torch.float32: 24, torch.float64: 53}
#: The largest integer magnitude converted to a float target: the same answer on every path.
EXACT_INTEGERS = {torch.bfloat16: 1 << 24, torch.float32: 1 << 53}
#: The signed integer dtype of a float's width (its bit patterns).
BITS = {torch.float16: torch.int16, torch.bfloat16: torch.int16, torch.float32: torch.int32,
        torch.float64: torch.int64}


def labelled_builders(source: torch.dtype, target: torch.dtype) -> dict[str, Builder]:
    """The sample parts of a conversion from ``source`` to ``target``, by label."""
    if source == target:
        return {}
    if source == torch.bool:
        return {"bool": _bools}
    if source in SIXTEEN_BIT:
        return {"all": functools.partial(every_value, source, target)}
    if target == torch.bool:
        return {"nonzero": functools.partial(_nonzero, source)}
    if not source.is_floating_point:
        label = "rounding" if target.is_floating_point else "range"
        return {label: functools.partial(_integers, source, target)}
    if not target.is_floating_point:
        return {"truncate": functools.partial(_truncating, source, target)}
    if PRECISION[target] > PRECISION[source]:
        return {"exact": functools.partial(_widening, source)}
    return {"ties": functools.partial(_ties, source, target),
            "range": functools.partial(_range, source, target)}


def every_value(source: torch.dtype, target: torch.dtype) -> torch.Tensor:
    """Every bit pattern of a 16-bit float (an integer target: those it defines)."""
    values = torch.arange(-(1 << 15), 1 << 15, dtype=torch.int16).view(source)
    return values if target.is_floating_point or target == torch.bool else in_range(values, target)


def in_range(values: torch.Tensor, target: torch.dtype) -> torch.Tensor:
    """The finite ``values`` whose truncation toward zero ``target`` holds."""
    info = torch.iinfo(target)
    whole = values.to(torch.float64).trunc()
    # float(info.max) + 1 is exact (a power of two) where float(info.max) is not.
    keep = torch.isfinite(whole) & (whole >= float(info.min)) & (whole < float(info.max) + 1)
    return values[keep]


def _bools() -> torch.Tensor:
    return torch.cat([torch.tensor([False, True]), torch.rand(PART) < 0.5])


def _nonzero(source: torch.dtype) -> torch.Tensor:
    """Zeros of both signs among ordinary values; for floats also NaN (True), +-inf and
    subnormals (True: a flush to zero gives False)."""
    if not source.is_floating_point:
        bounds = torch.iinfo(source)
        limits = torch.tensor([bounds.min, bounds.max, 0, 0, -1, 1], dtype=source)
        return torch.cat([limits, torch.randint(-2, 3, (PART,), dtype=source)])
    info = torch.finfo(source)
    tiny = info.smallest_normal * info.eps
    special = torch.tensor([0.0, -0.0, float("nan"), float("inf"), float("-inf"), tiny, -tiny,
                            info.smallest_normal, info.max, info.min], dtype=source)
    ordinary = uniform(PART, 10.0).to(source) * (torch.rand(PART) < 0.75).to(source)
    return torch.cat([special, ordinary])


def _integers(source: torch.dtype, target: torch.dtype) -> torch.Tensor:
    """The limits of what is converted, ordinary and random integers within them; for a float
    target also integers past its precision (2^p + k: ties at odd k)."""
    low, high = _integer_bound(source, target)
    limits = [low, low + 1, high - 1, high, 0, -1, 1]
    values = [torch.tensor(limits, dtype=torch.int64), torch.randint(-100, 100, (PART,)),
              torch.randint(low, high, (PART,), dtype=torch.int64)]
    if target.is_floating_point:
        precise = [(1 << p) + k for p in (PRECISION[target], PRECISION[target] + 3)
                   for k in range(-2, 10)]
        values.append(torch.tensor(precise + [-v for v in precise], dtype=torch.int64))
    every = torch.cat(values)
    return every[(every >= low) & (every <= high)].to(source)


def _integer_bound(source: torch.dtype, target: torch.dtype) -> tuple[int, int]:
    """The integers converted: those the target holds (an integer) or converts alike on every
    path (a float)."""
    info = torch.iinfo(target if not target.is_floating_point else source)
    low, high = max(info.min, torch.iinfo(source).min), min(info.max, torch.iinfo(source).max)
    exact = EXACT_INTEGERS.get(target)
    return (low, high) if exact is None else (max(low, -exact), min(high, exact))


def _steps(target: torch.dtype, source: torch.dtype) -> torch.dtype:
    """The dtype of the values for a float target: float32 for a 16-bit one (see above)."""
    return torch.float32 if target in SIXTEEN_BIT else source


def _target_values(target: torch.dtype) -> torch.Tensor:
    """Random finite values of ``target`` (float64): normal ones over its exponent range up to
    half its largest, a quarter subnormal, both signs."""
    info = torch.finfo(target)
    low, high = math.frexp(info.smallest_normal)[1] - 1, math.frexp(info.max)[1] - 2
    normal = powers_of_two(PART, low, high).to(target)
    tiny = info.smallest_normal * info.eps
    steps = torch.randint(1, round(1 / info.eps), (PART // 4,), dtype=torch.float64)
    subnormal = (steps * tiny).to(target)
    magnitudes = torch.cat([normal, subnormal])
    signs = torch.where(torch.rand(magnitudes.numel()) < 0.5, -1, 1).to(target)
    return (magnitudes * signs).to(torch.float64)


def uniform(count: int, scale: float) -> torch.Tensor:
    """Float64 values uniform in (-scale, scale)."""
    return (torch.rand(count, dtype=torch.float64) * 2 - 1) * scale


def powers_of_two(count: int, low: int, high: int) -> torch.Tensor:
    """Float64 values ``(1 + u) * 2**e``, ``e`` uniform in [low, high], ``u`` in [0, 1)."""
    exponents = torch.randint(low, high + 1, (count,)).tolist()
    fractions = torch.rand(count, dtype=torch.float64).tolist()
    return torch.tensor([math.ldexp(1 + u, e) for u, e in zip(fractions, exponents, strict=True)],
                        dtype=torch.float64)


def next_magnitude(values: torch.Tensor) -> torch.Tensor:
    """The neighbour one step further from zero of each (finite, not largest) value."""
    return (values.view(BITS[values.dtype]) + 1).view(values.dtype)


def _ties(source: torch.dtype, target: torch.dtype) -> torch.Tensor:
    """Halfway between two neighbours of ``target``, one step of ``_steps`` either side, and
    ordinary values."""
    step = _steps(target, source)
    lower = _target_values(target).to(target)
    halfway = ((lower.to(torch.float64) + next_magnitude(lower).to(torch.float64)) / 2).to(step)
    near = [halfway, torch.nextafter(halfway, halfway * 2), torch.nextafter(halfway, halfway * 0)]
    ordinary = uniform(PART, 100.0).to(step)
    return torch.cat([*near, ordinary]).to(source)


def _range(source: torch.dtype, target: torch.dtype) -> torch.Tensor:
    """The ends of ``target``'s range: overflow to infinity, subnormals, special values."""
    step = _steps(target, source)
    info = torch.finfo(target)
    largest = torch.tensor(info.max, dtype=target)
    below = (largest.view(BITS[target]) - 1).view(target)
    threshold = (largest.to(torch.float64) * 1.5 - below.to(torch.float64) / 2).to(step)
    tiny = info.smallest_normal * info.eps
    edges = torch.tensor(
        [info.max, info.max * 2, torch.finfo(step).max, info.smallest_normal, tiny, tiny / 2,
         tiny / 4, tiny * 1.5, tiny * 2.5, float("inf"), 0.0], dtype=torch.float64).to(step)
    edges = torch.cat([edges, threshold.reshape(1), torch.nextafter(edges, edges * 0),
                       torch.nextafter(threshold, threshold * 0).reshape(1),
                       torch.nextafter(edges, edges * 2)])
    subnormal_ties = (torch.randint(1, 64, (PART // 4,), dtype=torch.float64) + 0.5) * tiny
    values = torch.cat([edges, subnormal_ties.to(step)])
    values = torch.cat([values, -values, torch.tensor([float("nan")], dtype=step)])
    return values.to(source)


def _widening(source: torch.dtype) -> torch.Tensor:
    info = torch.finfo(source)
    tiny = info.smallest_normal * info.eps
    special = torch.tensor([float("nan"), float("inf"), float("-inf"), 0.0, -0.0, info.max,
                            info.min, info.smallest_normal, tiny, -tiny], dtype=source)
    return torch.cat([special, uniform(PART, 100.0).to(source)])


def _truncating(source: torch.dtype, target: torch.dtype) -> torch.Tensor:
    """Fractions of both signs near zero, values at every scale up to the integer's limits
    and next to them; only those whose truncation ``target`` holds."""
    info = torch.iinfo(target)
    near_zero = torch.tensor([0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.5, -1.5, 2.5, -2.5, 1e-3,
                              -1e-3, 7.75, -7.75], dtype=torch.float64)
    limits = torch.tensor([float(info.max) + 1, float(info.min)], dtype=torch.float64)
    limits = limits.to(source)
    beside = torch.cat([limits, torch.nextafter(limits, limits * 0)])
    scales = powers_of_two(PART, -4, info.bits - 2)
    signs = torch.where(torch.rand(PART) < 0.5, -1.0, 1.0).to(torch.float64)
    values = torch.cat([near_zero.to(source), beside, (scales * signs).to(source)])
    return in_range(values, target)
