"""Comparing a device result with its reference under the standard's tolerances.

Floating results pass where ``|actual - expected| <= atol + rtol * |expected|`` elementwise, NaN
only where the reference has NaN, infinities only where the reference has the same infinity.
Integer and boolean results must match exactly. Shape, dtype and structure must match.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from kit.outcomes import NumericMismatch, ResultMismatch
from kit.standard import Tolerance


def assert_close(actual: Any, expected: Any, tolerance: Tolerance, where: str = "output") -> None:
    """Raise ``NumericMismatch``/``ResultMismatch`` unless ``actual`` matches ``expected``.

    ``expected`` may be in a wider dtype (a float64 reference); ``expected_dtype`` checks are the
    caller's job via ``assert_same_dtype``.
    """
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            raise ResultMismatch(f"{where}: expected a tensor, got {type(actual).__name__}")
        _compare_tensors(actual, expected, tolerance, where)
    elif isinstance(expected, Mapping):
        if not isinstance(actual, Mapping) or set(actual) != set(expected):
            raise ResultMismatch(f"{where}: expected mapping keys {sorted(map(str, expected))}")
        for key in expected:
            assert_close(actual[key], expected[key], tolerance, f"{where}[{key!r}]")
    elif isinstance(expected, Sequence) and not isinstance(expected, str):
        if not isinstance(actual, Sequence) or len(actual) != len(expected):
            raise ResultMismatch(f"{where}: expected a sequence of length {len(expected)}")
        for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_close(a, e, tolerance, f"{where}[{index}]")
    elif isinstance(expected, (bool, int, float, complex)):
        _compare_tensors(torch.tensor(actual), torch.tensor(expected), tolerance, where)
    elif actual != expected:
        raise ResultMismatch(f"{where}: expected {expected!r}, got {actual!r}")


def assert_same_dtype(actual: Any, expected_dtype: torch.dtype, where: str = "output") -> None:
    if isinstance(actual, torch.Tensor) and actual.dtype != expected_dtype:
        raise ResultMismatch(
            f"{where}: dtype changed: expected {expected_dtype}, got {actual.dtype}",
            expected_dtype=str(expected_dtype),
            actual_dtype=str(actual.dtype),
        )


def _compare_tensors(
    actual: torch.Tensor, expected: torch.Tensor, tolerance: Tolerance, where: str
) -> None:
    actual = actual.detach().cpu()
    expected = expected.detach().cpu()
    if actual.shape != expected.shape:
        raise ResultMismatch(
            f"{where}: shape {tuple(actual.shape)} != expected {tuple(expected.shape)}",
            actual_shape=list(actual.shape),
            expected_shape=list(expected.shape),
        )
    if actual.is_floating_point() or actual.is_complex() or expected.is_floating_point():
        _compare_floating(actual, expected, tolerance, where)
    elif not torch.equal(actual, expected.to(actual.dtype)):
        _raise_mismatch(actual.double(), expected.double(), ~actual.eq(expected), 0.0, 0.0, where)


def _compare_floating(
    actual: torch.Tensor, expected: torch.Tensor, tolerance: Tolerance, where: str
) -> None:
    wide = torch.complex128 if actual.is_complex() or expected.is_complex() else torch.float64
    a = actual.to(wide)
    e = expected.to(wide)
    both_nan = torch.isnan(a) & torch.isnan(e)
    same_inf = torch.isinf(a) & torch.isinf(e) & (a == e)
    finite = torch.isfinite(a) & torch.isfinite(e)
    diff = torch.where(finite, (a - e).abs(), torch.zeros((), dtype=torch.float64))
    bound = tolerance.atol + tolerance.rtol * e.abs()
    close = both_nan | same_inf | (finite & (diff <= torch.where(finite, bound, diff)))
    if not bool(close.all()):
        _raise_mismatch(a, e, ~close, tolerance.atol, tolerance.rtol, where)


def _raise_mismatch(
    a: torch.Tensor, e: torch.Tensor, bad: torch.Tensor, atol: float, rtol: float, where: str
) -> None:
    diff = (a - e).abs()
    finite_diff = diff[torch.isfinite(diff)]
    max_abs = float(finite_diff.max()) if finite_diff.numel() else float("inf")
    rel = diff / e.abs().clamp_min(1e-300)
    finite_rel = rel[torch.isfinite(rel)]
    max_rel = float(finite_rel.max()) if finite_rel.numel() else float("inf")
    if not torch.isfinite(diff[bad]).all():
        # A NaN or infinity where the reference has none: the error is unbounded.
        max_abs = max_rel = float("inf")
    raise NumericMismatch(
        max_abs_err=max_abs,
        max_rel_err=max_rel,
        mismatched=int(bad.sum()),
        numel=int(bad.numel()),
        atol=atol,
        rtol=rtol,
        where=where,
    )
