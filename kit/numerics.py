"""The unit tier's numerics model: how far a floating result may be from its float64 reference.

Every floating output element is judged against the float64 reference ``ref`` with the bound::

    |actual - ref| <= |round(ref) - ref|                       rounding to the output dtype
                    + ulps * eps(out) * |ref|                  the op's own last-digit error
                    + normwise * eps(out) * S                  intermediates rounded to out
                    + accumulation * eps(acc) * sqrt(K) * S    error grown while accumulating
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
with a reason.
The model is documented for readers of the standard in ``standards/<v>/NUMERICS.md``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kit.errors import InputError

#: Floating dtypes the model knows, by name: machine epsilon and smallest normal.
FLOATING = ("float64", "float32", "bfloat16", "float16")


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
    #: The dtype accumulated in, when an override says the op accumulates in another one.
    accumulation_dtype: str | None = None
    #: Set when an op overrides its class: the reason, recorded with every result.
    why: str = ""

    def describe(self) -> dict[str, Any]:
        described: dict[str, Any] = {"class": self.op_class}
        if self.exact:
            described["exact"] = True
        else:
            described.update(
                ulps=self.ulps, normwise=self.normwise, accumulation=self.accumulation
            )
        if self.magnitude and not self.exact:
            described["magnitude"] = True
        if self.accumulation_dtype:
            described["accumulation_dtype"] = self.accumulation_dtype
        if self.why:
            described["override"] = self.why
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
            )
        constants.update(override.constants)
        return ErrorModel(
            name,
            False,
            **constants,
            accumulates=spec.accumulates,
            magnitude=spec.magnitude,
            accumulation_dtype=override.accumulation_dtype,
            why=override.why,
        )

    def accumulation_dtype(self, out_dtype: str) -> str:
        return self.accumulation_dtypes.get(out_dtype, out_dtype)

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


# -- the accumulation length -------------------------------------------------------------------


def accumulation_length(inputs: Any, output_numel: int) -> int:
    """An upper bound of how many terms any output element accumulates, from shapes alone.

    The largest of, over the floating tensor inputs: the reduction ratio (input numel over
    output numel: full and per-dim reductions), the longest dimension (softmax, cumsum, the K of
    a matmul) and one slice of the first dimension (a conv or linear weight's fan-in). Exact for
    reductions and weight fan-ins, an overestimate (never an underestimate) elsewhere.
    """
    length = 1
    for shape in _floating_shapes(inputs):
        numel = math.prod(shape)
        if numel <= 1:
            continue
        candidates = [max(shape), numel // max(1, output_numel)]
        if len(shape) > 1:
            candidates.append(numel // shape[0])
        length = max(length, *candidates)
    return length


def _floating_shapes(value: Any) -> Iterator[tuple[int, ...]]:
    import torch

    if isinstance(value, torch.Tensor):
        if value.is_floating_point() or value.is_complex():
            yield tuple(value.shape)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _floating_shapes(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _floating_shapes(item)
    elif isinstance(value, torch.nn.Module):
        for parameter in value.parameters():
            yield tuple(parameter.shape)


# -- parsing the standard's section ------------------------------------------------------------

_CLASS_FIELDS = {"exact", *CONSTANTS, "accumulates", "magnitude", "about"}
_FLAGS = ("exact", "accumulates", "magnitude")


def parse_numerics(raw: Any, where: str) -> NumericsRules:
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected a mapping with accumulation_dtypes and classes")
    unknown = set(raw) - {"accumulation_dtypes", "classes", "default_class"}
    if unknown:
        raise InputError(f"{where}: unknown field {sorted(unknown)[0]!r}")
    accumulation = raw.get("accumulation_dtypes")
    if not isinstance(accumulation, dict) or not all(
        k in FLOATING and v in FLOATING for k, v in accumulation.items()
    ):
        raise InputError(f"{where}.accumulation_dtypes: expected {{dtype: dtype}} of {FLOATING}")
    classes_raw = raw.get("classes")
    if not isinstance(classes_raw, dict) or not classes_raw:
        raise InputError(f"{where}.classes: expected a mapping of op classes")
    classes = {
        str(name): _parse_class(str(name), spec, f"{where}.classes.{name}")
        for name, spec in classes_raw.items()
    }
    default = raw.get("default_class")
    if default not in classes:
        raise InputError(f"{where}.default_class: expected one of {sorted(classes)}")
    return NumericsRules(dict(accumulation), classes, str(default))


def _parse_class(name: str, raw: Any, where: str) -> ClassSpec:
    if not isinstance(raw, dict) or set(raw) - _CLASS_FIELDS:
        raise InputError(f"{where}: expected a mapping of {sorted(_CLASS_FIELDS)}")
    exact, accumulates, magnitude = (raw.get(flag, False) for flag in _FLAGS)
    if not all(isinstance(raw.get(flag, False), bool) for flag in _FLAGS):
        raise InputError(f"{where}: {', '.join(_FLAGS)} are true or false")
    if exact:
        return ClassSpec(name, True, 0.0, 0.0, 0.0, False)
    return ClassSpec(
        name,
        False,
        non_negative(raw.get("ulps"), f"{where}.ulps"),
        non_negative(raw.get("normwise", 0), f"{where}.normwise"),
        non_negative(raw.get("accumulation", 0), f"{where}.accumulation"),
        accumulates,
        magnitude,
    )


def non_negative(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise InputError(f"{where}: expected a non-negative number, got {value!r}")
    return float(value)


def parse_overrides(raw: Any, where: str, dtypes: tuple[str, ...]) -> dict[str, Override]:
    """An op's ``numerics`` overrides:
    ``{dtype: {ulps?, normwise?, accumulation?, accumulation_dtype?, why}}``."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected a mapping dtype -> {{{', '.join(CONSTANTS)}, why}}")
    overrides = {}
    for dtype, entry in raw.items():
        here = f"{where}.{dtype}"
        if dtype not in FLOATING or dtype not in dtypes:
            raise InputError(f"{here}: expected a floating dtype the op is tested in")
        keys = (*CONSTANTS, "accumulation_dtype")
        if not isinstance(entry, dict) or set(entry) - {*keys, "why"}:
            raise InputError(f"{here}: expected some of {', '.join(keys)}, and why")
        constants = {c: non_negative(entry[c], f"{here}.{c}") for c in CONSTANTS if c in entry}
        accumulation_dtype = entry.get("accumulation_dtype")
        if accumulation_dtype is not None and accumulation_dtype not in FLOATING:
            raise InputError(f"{here}.accumulation_dtype: expected one of {FLOATING}")
        if not constants and accumulation_dtype is None:
            raise InputError(f"{here}: override at least one of {', '.join(keys)}")
        why = entry.get("why")
        if not isinstance(why, str) or not why.strip():
            raise InputError(f"{here}.why: expected a one-line reason for the override")
        overrides[str(dtype)] = Override(constants, " ".join(why.split()), accumulation_dtype)
    return overrides
