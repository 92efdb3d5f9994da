"""The criteria a result is judged by: one interface, three kinds.

- ``ErrorBound``: the unit tier's error model (``kit.numerics.model``) for one op: its class and
  overrides, its accumulation length and magnitude reference;
- ``Tolerance``: ``|actual - expected| <= atol + rtol * |expected|`` per element, plus an optional
  ``normwise`` share of the tensor's largest ``|expected|`` (end-to-end checks: the model tier and
  its training step, deploy smoke checks, float program flows, golden re-runs);
- ``SqnrFloor``: ``10 log10(sum expected^2 / sum (actual - expected)^2) >= db`` over every
  floating element (quantized program flows), any finite error per element.

Every kind judges a result (a tensor, a number, or sequences and mappings of them) against its
reference with ``judge``, a ``kit.numerics.judging.Judgement``: a measurement of every compared
tensor, pass or fail, and why the result fails; and says what records keep of it with
``describe``. Each is also the per-element bound ``kit.numerics.comparison`` measures with:
integer and boolean results must be equal under every kind. The standards' files are read into
criteria by ``kit.numerics.parsing``.

This module loads neither torch nor pytest (the standard holds its tolerances as ``Tolerance``);
judging does.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kit.numerics.model import (
    BoundParameters,
    ErrorModel,
    NumericsRules,
    Override,
    Widening,
    dtype_name,
    epsilon,
    smallest_normal,
)

if TYPE_CHECKING:
    import torch

    from kit.numerics.judging import Judgement


class Criterion(ABC):
    """How close a result must come to its reference."""

    def judge(self, actual: Any, expected: Any, where: str = "output") -> Judgement:
        """``actual`` against ``expected`` (same structure): every tensor measured under the
        per-element bound. Raises ``ResultMismatch`` where the structure or a shape differs."""
        from kit.numerics.judging import judge_elementwise

        return judge_elementwise(self, actual, expected, where)

    @abstractmethod
    def describe(self, dtype: str | None = None) -> BoundParameters:
        """The criterion's parameters as records keep them, for a result of ``dtype`` (the
        error model's constants depend on it; the other kinds take none)."""

    @abstractmethod
    def allowed(self, reference: torch.Tensor, out_dtype: torch.dtype,
                largest: float | None = None) -> torch.Tensor:
        """The largest allowed ``|actual - reference|`` per element (float64); ``largest``: the
        largest finite ``|reference|`` of the whole result when ``reference`` is a slice of it
        (None: of ``reference`` itself)."""

    def rounded(self, reference: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
        """The reference as the result is held to it (float64): itself, unless rounded."""
        return reference

    def is_exact(self, out_dtype: torch.dtype) -> bool:
        """Whether results of ``out_dtype`` must equal the (rounded) reference: integers and
        booleans."""
        return not (out_dtype.is_floating_point or out_dtype.is_complex)


@dataclass(frozen=True)
class ErrorBound(Criterion):
    """The standard's numerics model for one op, given its accumulation length."""

    rules: NumericsRules
    op_class: str | None
    overrides: Mapping[str, Override] = field(default_factory=dict)
    length: int = 1
    #: ``max |op(|x|)|`` in float64, for classes scaled by the magnitude reference (else 0).
    magnitude: float = 0.0
    #: ``U``, the largest uncentred term of a normalization, for ``centred`` classes (else 0).
    uncentred: float = 0.0
    #: For gradients: how the op's model widens (None: the op's own model).
    widening: Widening | None = None
    #: For gradients: the least scale ``S`` (the largest ``|grad_output|``), else 0.
    scale_floor: float = 0.0

    def model(self, dtype: str) -> ErrorModel:
        """The error model of results of ``dtype`` (a name: ``float32``)."""
        model = self.rules.model(self.op_class, dtype, self.overrides)
        if self.widening is None:
            return model
        least = self.rules.model(self.widening.least_class, dtype)
        return model.widened(least, self.widening.factor)

    def is_exact(self, out_dtype: torch.dtype) -> bool:
        return self.model(dtype_name(out_dtype)).exact

    def rounded(self, reference: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
        import torch

        if not out_dtype.is_floating_point:
            return reference
        return reference.to(out_dtype).to(torch.float64)

    def allowed(self, reference: torch.Tensor, out_dtype: torch.dtype,
                largest: float | None = None) -> torch.Tensor:
        name = dtype_name(out_dtype)
        model = self.model(name)
        rounding = (self.rounded(reference, out_dtype) - reference).abs().nan_to_num(0.0)
        if model.exact:
            return rounding
        size = reference.abs().nan_to_num(0.0, posinf=0.0, neginf=0.0)
        scale = _largest_finite(size) if largest is None else largest
        if model.magnitude:
            scale = max(scale, self.magnitude)
        scale = max(scale, self.scale_floor)
        grown = math.sqrt(self.length) if model.accumulates else 1.0
        accumulated_in = model.accumulation_dtype or self.rules.accumulation_dtype(name)
        accumulated = model.accumulation * epsilon(accumulated_in)
        absolute = (model.normwise * epsilon(name) + accumulated * grown) * scale
        if model.centred and self.uncentred > scale:
            # What the statistics are accumulated over: the uncentred terms, not the result.
            absolute += accumulated * grown * (self.uncentred - scale)
        return rounding + model.ulps * epsilon(name) * size + absolute + smallest_normal(name)

    def describe(self, dtype: str | None = None) -> BoundParameters:
        if dtype is None:
            raise ValueError("the error model is described for a result dtype")
        model = self.model(dtype)
        described = model.describe()
        if not model.exact and model.accumulates:
            described["length"] = self.length
        if not model.exact and model.magnitude:
            described["magnitude"] = self.magnitude
        if not model.exact and model.centred:
            described["uncentred"] = self.uncentred
        if not model.exact and self.scale_floor:
            described["scale_floor"] = self.scale_floor
        return described


@dataclass(frozen=True)
class Tolerance(Criterion):
    """``|actual - expected| <= atol + rtol * |expected| + normwise * S`` per element, ``S`` the
    largest finite ``|expected|`` of the tensor (``normwise`` 0 unless a budget sets it: a model's
    gradients, whose small elements carry the error of the large ones they were summed with)."""

    atol: float
    rtol: float
    normwise: float = 0.0

    def allowed(self, reference: torch.Tensor, out_dtype: torch.dtype,
                largest: float | None = None) -> torch.Tensor:
        size = reference.abs()
        if not self.normwise:
            return self.atol + self.rtol * size
        scale = _largest_finite(size) if largest is None else largest
        return self.atol + self.rtol * size + self.normwise * scale

    def describe(self, dtype: str | None = None) -> BoundParameters:
        described: BoundParameters = {"atol": self.atol, "rtol": self.rtol}
        return {**described, "normwise": self.normwise} if self.normwise else described


@dataclass(frozen=True)
class SqnrFloor(Criterion):
    """Quantized outputs pass when ``10 log10(|expected|^2 / |actual - expected|^2)``, over
    every floating element finite on both sides, is at least ``db``. Per element, any finite
    error passes; NaN and infinities only where the reference has the same."""

    db: float

    def judge(self, actual: Any, expected: Any, where: str = "output") -> Judgement:
        from kit.numerics.judging import judge_signal_to_noise

        return judge_signal_to_noise(self, actual, expected, where)

    def allowed(self, reference: torch.Tensor, out_dtype: torch.dtype,
                largest: float | None = None) -> torch.Tensor:
        import torch

        return torch.full(reference.shape, math.inf, dtype=torch.float64)

    def describe(self, dtype: str | None = None) -> BoundParameters:
        return {"sqnr_floor_db": self.db}


def _largest_finite(size: torch.Tensor) -> float:
    from kit.numerics.comparison import largest_finite

    return largest_finite(size)
