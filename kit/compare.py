"""Comparing a device result with its reference, elementwise, under a bound.

Two kinds of bound:

- ``ErrorBound`` (the unit tier): the standard's numerics model (``kit.numerics``): the
  reference rounded to the output dtype, plus ulps of the output dtype, plus accumulation error
  scaled by the output's magnitude. Integer and boolean results, and ``exact`` op classes, must
  equal the rounded reference.
- ``Tolerance`` (end-to-end checks: models, deploy smoke tests): ``atol + rtol * |expected|``.

NaN passes only where the reference is NaN, an infinity only where the (rounded) reference is
the same infinity. Shape, dtype and structure must match. Every compared tensor yields a
``Measurement`` (kept for passing results too): the worst error as a ratio to its bound, in
ulps of the output dtype, absolute and relative, and the bound's parameters.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from kit.numerics import ErrorModel, NumericsRules, epsilon, smallest_normal
from kit.outcomes import NumericMismatch, ResultMismatch, worst_of
from kit.standard import Tolerance


class Bound(Protocol):
    def allowed(self, reference: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
        """The largest allowed ``|actual - reference|`` per element (float64)."""
        ...

    def rounded(self, reference: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
        """The reference as the output dtype can hold it (float64)."""
        ...

    def is_exact(self, out_dtype: torch.dtype) -> bool: ...

    def describe(self, out_dtype: torch.dtype) -> dict[str, Any]: ...


@dataclass(frozen=True)
class ToleranceBound:
    tolerance: Tolerance

    def allowed(self, reference: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
        return self.tolerance.atol + self.tolerance.rtol * reference.abs()

    def rounded(self, reference: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
        return reference

    def is_exact(self, out_dtype: torch.dtype) -> bool:
        return not (out_dtype.is_floating_point or out_dtype.is_complex)

    def describe(self, out_dtype: torch.dtype) -> dict[str, Any]:
        return {"atol": self.tolerance.atol, "rtol": self.tolerance.rtol}


@dataclass(frozen=True)
class ErrorBound:
    """The standard's numerics model for one op, given its accumulation length."""

    rules: NumericsRules
    op_class: str | None
    overrides: Mapping[str, Any]
    length: int
    #: ``max |op(|x|)|`` in float64, for classes scaled by the magnitude reference (else 0).
    magnitude: float = 0.0

    def model(self, out_dtype: torch.dtype) -> ErrorModel:
        return self.rules.model(self.op_class, dtype_name(out_dtype), self.overrides)

    def is_exact(self, out_dtype: torch.dtype) -> bool:
        return self.model(out_dtype).exact

    def rounded(self, reference: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
        if not out_dtype.is_floating_point:
            return reference
        return reference.to(out_dtype).to(torch.float64)

    def allowed(self, reference: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
        model = self.model(out_dtype)
        name = dtype_name(out_dtype)
        rounding = (self.rounded(reference, out_dtype) - reference).abs().nan_to_num(0.0)
        if model.exact:
            return rounding
        size = reference.abs().nan_to_num(0.0, posinf=0.0, neginf=0.0)
        scale = float(size.max()) if size.numel() else 0.0
        if model.magnitude:
            scale = max(scale, self.magnitude)
        grown = math.sqrt(self.length) if model.accumulates else 1.0
        accumulated_in = model.accumulation_dtype or self.rules.accumulation_dtype(name)
        accumulated = model.accumulation * epsilon(accumulated_in)
        return (
            rounding
            + model.ulps * epsilon(name) * size
            + (model.normwise * epsilon(name) + accumulated * grown) * scale
            + smallest_normal(name)
        )

    def describe(self, out_dtype: torch.dtype) -> dict[str, Any]:
        model = self.model(out_dtype)
        described = model.describe()
        if not model.exact and model.accumulates:
            described["length"] = self.length
        if not model.exact and model.magnitude:
            described["magnitude"] = self.magnitude
        return described


def unit_bound(op_class: str | None, length: int = 1, standard: Any = None) -> ErrorBound:
    """The bound the unit tier applies to an op of ``op_class`` (default: the kit's standard)."""
    from kit.standard import load_standard

    rules = (standard or load_standard()).numerics
    return ErrorBound(rules, op_class, {}, length)


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def as_bound(bound: Bound | Tolerance) -> Bound:
    return ToleranceBound(bound) if isinstance(bound, Tolerance) else bound


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
    actual: Any, expected: Any, bound: Bound | Tolerance, where: str = "output"
) -> list[Measurement]:
    """Measure every tensor of ``actual`` against ``expected``; structure errors raise."""
    found: list[Measurement] = []
    _walk(actual, expected, as_bound(bound), where, found)
    return found


def assert_close(
    actual: Any, expected: Any, bound: Bound | Tolerance, where: str = "output"
) -> list[Measurement]:
    """Raise ``NumericMismatch``/``ResultMismatch`` unless ``actual`` matches ``expected``.

    ``expected`` may be in a wider dtype (a float64 reference); dtype checks are the caller's
    job (``assert_same_dtype``). Returns the measurements when everything is within bounds.
    """
    measurements = measure_all(actual, expected, bound, where)
    worst = worst_of(measurements)
    if worst is not None and worst.mismatched:
        raise NumericMismatch(worst, measurements)
    return measurements


def _walk(actual: Any, expected: Any, bound: Bound, where: str, found: list[Measurement]) -> None:
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            raise ResultMismatch(f"{where}: expected a tensor, got {type(actual).__name__}")
        found.append(_measure(actual, expected, bound, where))
    elif isinstance(expected, Mapping):
        if not isinstance(actual, Mapping) or set(actual) != set(expected):
            raise ResultMismatch(f"{where}: expected mapping keys {sorted(map(str, expected))}")
        for key in expected:
            _walk(actual[key], expected[key], bound, f"{where}[{key!r}]", found)
    elif isinstance(expected, Sequence) and not isinstance(expected, str):
        if not isinstance(actual, Sequence) or len(actual) != len(expected):
            raise ResultMismatch(f"{where}: expected a sequence of length {len(expected)}")
        for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
            _walk(a, e, bound, f"{where}[{index}]", found)
    elif isinstance(expected, (bool, int, float, complex)):
        if not isinstance(actual, (bool, int, float, complex)):
            raise ResultMismatch(f"{where}: expected a number, got {type(actual).__name__}")
        found.append(_measure(torch.tensor(actual), torch.tensor(expected), bound, where))
    elif actual != expected:
        raise ResultMismatch(f"{where}: expected {expected!r}, got {actual!r}")


def assert_same_dtype(actual: Any, expected_dtype: torch.dtype, where: str = "output") -> None:
    if isinstance(actual, torch.Tensor) and actual.dtype != expected_dtype:
        raise ResultMismatch(
            f"{where}: dtype changed: expected {expected_dtype}, got {actual.dtype}",
            expected_dtype=str(expected_dtype),
            actual_dtype=str(actual.dtype),
        )


def _measure(
    actual: torch.Tensor, expected: torch.Tensor, bound: Bound, where: str
) -> Measurement:
    actual = actual.detach().cpu()
    expected = expected.detach().cpu()
    if actual.shape != expected.shape:
        raise ResultMismatch(
            f"{where}: shape {tuple(actual.shape)} != expected {tuple(expected.shape)}",
            actual_shape=list(actual.shape),
            expected_shape=list(expected.shape),
        )
    out_dtype = actual.dtype
    wide = torch.complex128 if actual.is_complex() or expected.is_complex() else torch.float64
    a = actual.to(wide)
    e = expected.to(wide)
    if actual.is_complex() or expected.is_complex():
        allowed = bound.allowed(e.abs(), torch.float32 if out_dtype.is_complex else out_dtype)
        rounded = e
    else:
        rounded = bound.rounded(e, out_dtype)
        allowed = bound.allowed(e, out_dtype)
    diff = (a - e).abs()
    if bound.is_exact(out_dtype):
        close = (a == rounded) | (torch.isnan(a) & torch.isnan(e))
    else:
        both_nan = torch.isnan(a) & torch.isnan(e)
        same_inf = torch.isinf(a) & (a == rounded)
        finite = torch.isfinite(a) & torch.isfinite(e)
        close = both_nan | same_inf | (finite & (diff <= allowed))
    return _measurement(a, e, diff, allowed, ~close, out_dtype, bound, where)


def _measurement(
    a: torch.Tensor,
    e: torch.Tensor,
    diff: torch.Tensor,
    allowed: torch.Tensor,
    bad: torch.Tensor,
    out_dtype: torch.dtype,
    bound: Bound,
    where: str,
) -> Measurement:
    name = dtype_name(out_dtype)
    mismatched = int(bad.sum())
    unbounded = bool((bad & ~torch.isfinite(diff)).any())
    finite = torch.isfinite(diff) & ~(torch.isinf(a) & torch.isinf(e))
    err = torch.where(finite, diff, torch.zeros((), dtype=diff.dtype)).real.to(torch.float64)
    ratio = _max(torch.where(err > 0, err / allowed.clamp_min(1e-300), err))
    if mismatched and bound.is_exact(out_dtype):
        ratio = math.inf
    floor = smallest_normal(name) if out_dtype.is_floating_point else 1.0
    magnitude = e.abs().real.to(torch.float64) if e.is_complex() else e.abs()
    unit = epsilon(name) if out_dtype.is_floating_point else 1.0
    ulps = err / (unit * magnitude.clamp_min(floor))
    relative = err / magnitude.clamp_min(1e-300)
    max_abs, max_rel, max_ulps = _max(err), _max(relative), _max(ulps)
    if unbounded:
        # A NaN or infinity where the reference has none: the error is unbounded.
        ratio = max_abs = max_rel = max_ulps = math.inf
    return Measurement(
        where=where,
        numel=int(bad.numel()),
        mismatched=mismatched,
        ratio=ratio,
        max_abs_err=max_abs,
        max_rel_err=max_rel,
        max_ulps=max_ulps,
        dtype=name,
        bound=bound.describe(out_dtype),
    )


def _max(values: torch.Tensor) -> float:
    values = values[torch.isfinite(values)]
    return float(values.max()) if values.numel() else 0.0
