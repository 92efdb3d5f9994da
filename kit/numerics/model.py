"""The unit tier's numerics model: how far a floating result may be from its float64 reference.

Every floating output element is judged against the float64 reference ``ref`` with the bound::

    |actual - ref| <= |round(ref) - ref|                       rounding to the output dtype
                    + ulps * eps(out) * |ref|                  the op's own last-digit error
                    + normwise * eps(out) * S                  intermediates rounded to out
                    + accumulation * eps(acc) * sqrt(K) * S    error grown while accumulating
                      (S here at least U for a ``centred`` class)
                    + tiny(out)                                results below the smallest normal
                                                               may be flushed to zero

``out`` is the dtype of the result (never the dtype of the inputs: ``cos`` of an int64 tensor
is judged as float32), ``acc`` the accumulation dtype the standard requires for ``out``
(float32 for float16/bfloat16), ``K`` the accumulation length (an upper bound taken from the
input shapes), ``S`` the largest finite ``|ref|`` of that output (a normwise scale) and, for
classes that declare ``magnitude``, at least the largest ``|op(|x|)|``: the op evaluated in
float64 on the absolute values of its floating inputs, the size of the terms an op with
cancellation rounds on the way (Higham's ``sum |x_i|``), and ``round`` rounding to ``out``: an
exact result that overflows float16 is infinite on both sides. Op classes (``exact``,
``elementwise`` ...) fix ``ulps``, ``normwise``, ``accumulation``, whether ``K`` applies and
whether ``S`` takes the magnitude reference; an op may override the constants per dtype
with a reason. A ``centred`` class (a normalization: a mean subtracted, the difference scaled
by ``r = 1/sqrt(var + eps)``) has its accumulation term grow with ``U``, the largest
``(|x| + |mean|) * r * |weight|``: the terms it rounds before the mean is taken off, which
cancel far below ``S`` when the input sits far from zero (``kit.tiers.unit.centring``).
The model is documented for readers of the standard in ``standards/<v>/NUMERICS.md``; the
standard's section is read by ``kit.numerics.parsing``, ``K`` is ``kit.numerics.accumulation``'s
and the bound is applied by ``kit.numerics.criteria.ErrorBound``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, TypedDict

from kit.errors import InputError

#: Floating dtypes the model knows, by name: machine epsilon and smallest normal.
FLOATING = ("float64", "float32", "bfloat16", "float16")


#: A criterion's parameters as records keep them (``Criterion.describe``, a measurement's
#: ``bound``): the error model's (``class`` and its constants, or ``exact``; what the unit tier's
#: bound adds), a tolerance's, or an SQNR floor's. ``magnitude`` is the model's switch (True)
#: until ``ErrorBound`` replaces it with the magnitude reference.
BoundParameters = TypedDict("BoundParameters", {
    "class": str | None,
    "exact": bool,
    "ulps": float,
    "normwise": float,
    "accumulation": float,
    "magnitude": float,
    "centred": bool,
    "accumulation_dtype": str,
    "override": str,
    "widening": float,
    "least_class": str,
    "length": int,
    "uncentred": float,
    "scale_floor": float,
    "atol": float,
    "rtol": float,
    "sqnr_floor_db": float,
}, total=False)


@dataclass(frozen=True)
class ErrorModel:
    """The constants of one op class (or of one op's override) for one output dtype."""

    op_class: str
    #: ``exact``: the result must equal the reference rounded to the output dtype.
    exact: bool
    ulps: float
    normwise: float
    accumulation: float
    #: Whether the accumulation term grows with sqrt(K) (reductions, contractions, norms).
    accumulates: bool
    #: Whether ``S`` is at least the magnitude reference ``max |op(|x|)|``.
    magnitude: bool = False
    #: Whether the accumulation term scales with the uncentred terms ``U`` (normalizations).
    centred: bool = False
    #: The dtype accumulated in, when an override says the op accumulates in another one.
    accumulation_dtype: str | None = None
    #: Set when an op overrides its class: the reason, recorded with every result.
    why: str = ""
    #: The factor the constants were widened by (a gradient: ``widened``), 1 if none.
    widening: float = 1.0
    #: The class whose constants these are at least (``widened``), empty if none.
    least_class: str = ""

    def widened(self, least: ErrorModel, factor: float) -> ErrorModel:
        """The model of a gradient: each of ``ulps``, ``normwise`` and ``accumulation`` at
        least ``least``'s, times ``factor`` (``Widening``); exact only if both are exact."""
        if self.exact and least.exact:
            return self
        own = (0.0, 0.0, 0.0) if self.exact else (self.ulps, self.normwise, self.accumulation)
        ulps, normwise, accumulation = (
            max(mine, floor) * factor
            for mine, floor in zip(own, (least.ulps, least.normwise, least.accumulation),
                                   strict=True))
        return replace(self, exact=False, ulps=ulps, normwise=normwise,
                       accumulation=accumulation, widening=factor, least_class=least.op_class)

    def describe(self) -> BoundParameters:
        described: BoundParameters = {"class": self.op_class}
        if self.exact:
            described["exact"] = True
        else:
            described.update(
                {"ulps": self.ulps, "normwise": self.normwise, "accumulation": self.accumulation}
            )
        if self.magnitude and not self.exact:
            described["magnitude"] = True
        if self.centred and not self.exact:
            described["centred"] = True
        if self.accumulation_dtype:
            described["accumulation_dtype"] = self.accumulation_dtype
        if self.why:
            described["override"] = self.why
        if self.widening != 1.0:
            described["widening"] = self.widening
        if self.least_class:
            described["least_class"] = self.least_class
        return described


@dataclass(frozen=True)
class ClassSpec:
    name: str
    exact: bool
    ulps: float
    normwise: float
    accumulation: float
    accumulates: bool
    magnitude: bool = False
    centred: bool = False


@dataclass(frozen=True)
class Widening:
    """How the bound of an op's gradients widens the op's own (``ErrorModel.widened``)."""

    #: The constants times this: a backward pass rounds the forward's intermediates, then its
    #: own products and sums.
    factor: float
    #: The class whose constants each gradient's are at least (an elementwise op's class has
    #: no normwise term; its gradient multiplies by a rounded forward result).
    least_class: str


#: The constants a class sets and an op may override.
CONSTANTS = ("ulps", "normwise", "accumulation")


@dataclass(frozen=True)
class Override:
    """An op's own constants for one dtype (None: the class's), with the reason."""

    constants: Mapping[str, float]
    why: str
    #: The dtype the op accumulates in, when not the standard's accumulation dtype.
    accumulation_dtype: str | None = None


@dataclass(frozen=True)
class NumericsRules:
    """The ``numerics`` section of a standard."""

    accumulation_dtypes: Mapping[str, str]
    classes: Mapping[str, ClassSpec]
    default_class: str
    #: The class whose constants each result of a compiled graph is judged at least by (the
    #: compile tier; ``numerics.compiled.least_class``); None: each op's own class.
    compiled_least_class: str | None = None

    def model(
        self, op_class: str | None, out_dtype: str, overrides: Mapping[str, Override] | None = None
    ) -> ErrorModel:
        """The error model for an op of ``op_class`` whose result has dtype ``out_dtype``."""
        name = op_class or self.default_class
        spec = self.classes.get(name)
        if spec is None:
            raise InputError(f"numerics: unknown op class {name!r} (known: {sorted(self.classes)})")
        if out_dtype not in FLOATING:
            return ErrorModel(name, True, 0.0, 0.0, 0.0, False)
        override = (overrides or {}).get(out_dtype)
        constants = {c: getattr(spec, c) for c in CONSTANTS}
        if override is None:
            return ErrorModel(
                name,
                spec.exact,
                **constants,
                accumulates=spec.accumulates,
                magnitude=spec.magnitude,
                centred=spec.centred,
            )
        constants.update(override.constants)
        return ErrorModel(
            name,
            False,
            **constants,
            accumulates=spec.accumulates,
            magnitude=spec.magnitude,
            centred=spec.centred,
            accumulation_dtype=override.accumulation_dtype,
            why=override.why,
        )

    def accumulation_dtype(self, out_dtype: str) -> str:
        return self.accumulation_dtypes.get(out_dtype, out_dtype)

    def is_centred(self, op_class: str | None) -> bool:
        """Whether results of ``op_class`` are bounded by their uncentred terms too."""
        spec = self.classes.get(op_class or self.default_class)
        return spec is not None and spec.centred

    def uses_magnitude(self, op_class: str | None) -> bool:
        """Whether results of ``op_class`` are scaled by the magnitude reference."""
        spec = self.classes.get(op_class or self.default_class)
        return spec is not None and spec.magnitude


def epsilon(dtype: str) -> float:
    import torch

    return float(torch.finfo(getattr(torch, dtype)).eps)


def smallest_normal(dtype: str) -> float:
    import torch

    return float(torch.finfo(getattr(torch, dtype)).tiny)


def dtype_name(dtype: Any) -> str:
    """The name the model knows a torch dtype by (``torch.float32`` -> ``float32``)."""
    return str(dtype).removeprefix("torch.")
