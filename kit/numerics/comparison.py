"""Comparing a result with its reference, tensor by tensor, under a criterion's per-element bound.

The criteria (``kit.numerics.criteria``) give the bound: the error model's, ``atol + rtol *
|expected|``, or any finite error for an SQNR floor (which then judges the sum of the errors).
Integer and boolean results, and ``exact`` op classes, must equal the rounded reference.

NaN passes only where the reference is NaN, an infinity only where the (rounded) reference is
the same infinity. Shape and structure must match. Every compared tensor yields a
``Measurement`` (kept for passing results too): the worst error as a ratio to its bound, in
ulps of the output dtype, absolute and relative, and the bound's parameters.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from kit.numerics.model import BoundParameters, dtype_name, epsilon, smallest_normal
from kit.outcomes import ResultMismatch


class Bound(Protocol):
    def allowed(self, reference: torch.Tensor, out_dtype: torch.dtype,
                largest: float | None = None) -> torch.Tensor:
        """The largest allowed ``|actual - reference|`` per element (float64); ``largest``: the
        largest finite ``|reference|`` of the whole tensor when ``reference`` is a slice of it
        (None: of ``reference``)."""
        ...

    def rounded(self, reference: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
        """The reference as the output dtype can hold it (float64)."""
        ...

    def is_exact(self, out_dtype: torch.dtype) -> bool:
        """Whether results of ``out_dtype`` must equal the rounded reference."""
        ...

    def describe(self, dtype: str | None = None) -> BoundParameters:
        """The bound's parameters for results of ``dtype``, as records keep them."""
        ...


@dataclass(frozen=True)
class Measurement:
    """How far one compared tensor was from its reference, pass or fail."""

    where: str
    numel: int
    mismatched: int
    #: The worst ``|actual - reference| / bound`` (<= 1 passes; inf: NaN/inf where not allowed).
    ratio: float
    max_abs_err: float
    max_rel_err: float
    #: The worst error in units of eps(output dtype) times max(|reference|, smallest normal).
    max_ulps: float
    dtype: str
    bound: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "where": self.where,
            "dtype": self.dtype,
            "ratio_to_bound": _finite_or_str(self.ratio),
            "max_abs_err": _finite_or_str(self.max_abs_err),
            "max_rel_err": _finite_or_str(self.max_rel_err),
            "max_ulps": _finite_or_str(self.max_ulps),
            "mismatched": self.mismatched,
            "numel": self.numel,
            "bound": dict(self.bound),
        }


def _finite_or_str(value: float) -> float | str:
    # The report is strict JSON (no NaN/Infinity): unbounded errors are written as a word.
    return value if math.isfinite(value) else ("inf" if value > 0 else "nan")


def measure_all(
    actual: Any, expected: Any, bound: Bound, where: str = "output"
) -> list[Measurement]:
    """Measure every tensor of ``actual`` against ``expected``; structure errors raise."""
    return [measure(a, e, bound, at) for at, a, e in paired_tensors(actual, expected, where)]


def paired_tensors(
    actual: Any, expected: Any, where: str = "output"
) -> Iterator[tuple[str, torch.Tensor, torch.Tensor]]:
    """``(where, actual, expected)`` for every tensor (or number) of ``expected``, in order,
    on the CPU; raises ``ResultMismatch`` where the structure or a shape differs."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            raise ResultMismatch(f"{where}: expected a tensor, got {type(actual).__name__}")
        yield where, *_same_shape(actual.detach().cpu(), expected.detach().cpu(), where)
    elif isinstance(expected, Mapping):
        if not isinstance(actual, Mapping) or set(actual) != set(expected):
            raise ResultMismatch(f"{where}: expected mapping keys {sorted(map(str, expected))}")
        named = isinstance(expected, NamedParts)
        for key in expected:
            yield from paired_tensors(actual[key], expected[key],
                                      str(key) if named else f"{where}[{key!r}]")
    elif isinstance(expected, Sequence) and not isinstance(expected, str):
        if not isinstance(actual, Sequence) or len(actual) != len(expected):
            raise ResultMismatch(f"{where}: expected a sequence of length {len(expected)}")
        fields = _field_names(expected)
        for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
            at = f"{where}.{fields[index]}" if fields else f"{where}[{index}]"
            yield from paired_tensors(a, e, at)
    elif isinstance(expected, (bool, int, float, complex)):
        if not isinstance(actual, (bool, int, float, complex)):
            raise ResultMismatch(f"{where}: expected a number, got {type(actual).__name__}")
        yield where, torch.tensor(actual), torch.tensor(expected)
    elif actual != expected:
        raise ResultMismatch(f"{where}: expected {expected!r}, got {actual!r}")


class NamedParts(dict[str, object]):
    """Parts of one judged result, each measured under its own name (``output``, and an
    input the op updates by design as ``running_mean (args[1])``) rather than by position."""


def _field_names(value: Sequence[Any]) -> tuple[str, ...] | None:
    """The fields of an op's named result (``torch.return_types.max``: values, indices)."""
    names = getattr(type(value), "__match_args__", None)
    if type(value).__module__ != "torch.return_types" or not names or len(names) != len(value):
        return None
    return tuple(str(name) for name in names)


def _same_shape(
    actual: torch.Tensor, expected: torch.Tensor, where: str
) -> tuple[torch.Tensor, torch.Tensor]:
    if actual.shape != expected.shape:
        raise ResultMismatch(
            f"{where}: shape {tuple(actual.shape)} != expected {tuple(expected.shape)}",
            failure="wrong-shape",
            actual_shape=list(actual.shape),
            expected_shape=list(expected.shape),
        )
    return actual, expected


def assert_same_dtype(actual: Any, expected_dtype: torch.dtype, where: str = "output") -> None:
    if isinstance(actual, torch.Tensor) and actual.dtype != expected_dtype:
        raise ResultMismatch(
            f"{where}: dtype changed: expected {expected_dtype}, got {actual.dtype}",
            failure="wrong-dtype",
            expected_dtype=str(expected_dtype),
            actual_dtype=str(actual.dtype),
        )


#: Elements compared at a time: the dozens of elementwise passes of a comparison run over
#: cache-sized slices (a 2^24-element result took 3.2 s at once, 0.5 s by slices, one thread).
SLICE_ELEMENTS = 1 << 18


def measure(
    actual: torch.Tensor, expected: torch.Tensor, bound: Bound, where: str
) -> Measurement:
    """How far ``actual`` is from ``expected`` (same shape, on the CPU) under ``bound``."""
    out_dtype = actual.dtype
    is_complex = actual.is_complex() or expected.is_complex()
    wide = torch.complex128 if is_complex else torch.float64
    a = actual.to(wide).reshape(-1)
    e = expected.to(wide).reshape(-1)
    # A complex result is bounded by its reference's magnitude, in its parts' dtype.
    reference = e.abs() if is_complex else e
    bounded_as = torch.float32 if out_dtype.is_complex else out_dtype
    exact = bound.is_exact(out_dtype)
    name = dtype_name(out_dtype)
    slices = [slice(start, start + SLICE_ELEMENTS)
              for start in range(0, max(a.numel(), 1), SLICE_ELEMENTS)]
    # The bound's scale is the whole result's (one slice: its own, found by the bound itself).
    largest = None if len(slices) == 1 else max(
        largest_finite(reference[at].abs()) for at in slices)

    def errors_in(at: slice) -> _Errors:
        rounded = e[at] if is_complex else bound.rounded(e[at], out_dtype)
        allowed = bound.allowed(reference[at], bounded_as, largest)
        return _errors(a[at], e[at], rounded, allowed.broadcast_to(a[at].shape), exact,
                       out_dtype)

    errors = [errors_in(at) for at in slices]
    mismatched = sum(part.mismatched for part in errors)
    ratio, max_abs, max_rel, max_ulps = (max(values) for values in zip(
        *((p.ratio, p.max_abs, p.max_rel, p.max_ulps) for p in errors), strict=True))
    if mismatched and exact:
        ratio = math.inf
    if any(part.unbounded for part in errors):
        # A NaN or infinity where the reference has none: the error is unbounded.
        ratio = max_abs = max_rel = max_ulps = math.inf
    return Measurement(
        where=where,
        numel=a.numel(),
        mismatched=mismatched,
        ratio=ratio,
        max_abs_err=max_abs,
        max_rel_err=max_rel,
        max_ulps=max_ulps,
        dtype=name,
        bound=bound.describe(name),
    )


@dataclass(frozen=True)
class _Errors:
    """One slice's part of a ``Measurement``: its mismatches and its largest finite errors."""

    mismatched: int
    unbounded: bool
    ratio: float
    max_abs: float
    max_rel: float
    max_ulps: float


def _errors(a: torch.Tensor, e: torch.Tensor, rounded: torch.Tensor, allowed: torch.Tensor,
            exact: bool, out_dtype: torch.dtype) -> _Errors:
    """NaN passes only where the reference is NaN, an infinity only where the (rounded)
    reference is the same infinity; a finite element within its bound."""
    diff = (a - e).abs()
    if exact:
        close = (a == rounded) | (torch.isnan(a) & torch.isnan(e))
    else:
        both_nan = torch.isnan(a) & torch.isnan(e)
        same_inf = torch.isinf(a) & (a == rounded)
        finite_sides = torch.isfinite(a) & torch.isfinite(e)
        close = both_nan | same_inf | (finite_sides & (diff <= allowed))
    bad = ~close
    # A difference is finite only where both sides are (two infinities give NaN or infinity).
    finite = torch.isfinite(diff)
    err = torch.where(finite, diff, torch.zeros((), dtype=diff.dtype)).real.to(torch.float64)
    name = dtype_name(out_dtype)
    floor = smallest_normal(name) if out_dtype.is_floating_point else 1.0
    magnitude = e.abs().real.to(torch.float64) if e.is_complex() else e.abs()
    unit = epsilon(name) if out_dtype.is_floating_point else 1.0
    return _Errors(
        mismatched=int(bad.sum()),
        unbounded=bool((bad & ~finite).any()),
        ratio=largest_finite(torch.where(err > 0, err / allowed.clamp_min(1e-300), err)),
        max_abs=largest_finite(err),
        max_rel=largest_finite(err / magnitude.clamp_min(1e-300)),
        max_ulps=largest_finite(err / (unit * magnitude.clamp_min(floor))),
    )


def largest_finite(values: torch.Tensor) -> float:
    """The largest finite value of ``values`` (all >= 0 or NaN: magnitudes, errors), 0 if none:
    non-finite ones become 0 rather than being selected out (a copy the size of the tensor)."""
    if not values.numel():
        return 0.0
    return float(values.nan_to_num(0.0, posinf=0.0, neginf=0.0).max())


def signal_to_noise(pairs: Sequence[tuple[torch.Tensor, torch.Tensor]]) -> float:
    """``10 log10(sum expected^2 / sum (actual - expected)^2)`` in dB over every element of the
    ``(actual, expected)`` pairs that is finite on both sides (NaN and infinities are judged
    elementwise); infinite for an exact result."""
    if not pairs:
        return math.inf
    actual = torch.cat([a.detach().reshape(-1).to(torch.float64) for a, _ in pairs])
    expected = torch.cat([e.detach().reshape(-1).to(torch.float64) for _, e in pairs])
    finite = torch.isfinite(actual) & torch.isfinite(expected)
    actual, expected = actual[finite], expected[finite]
    return sqnr_db(float((expected**2).sum()), float(((actual - expected) ** 2).sum()))


def sqnr_db(signal: float, noise: float) -> float:
    """10 log10(signal / noise); infinite for an exact result."""
    if noise == 0.0:
        return math.inf
    if signal == 0.0:
        return -math.inf
    return 10.0 * math.log10(signal / noise)
