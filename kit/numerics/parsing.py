"""Reading the standards' numeric criteria: the unit tier's error model (``standard.yaml``
``numerics:`` and an op's overrides in ``unit.yaml``), tolerances and SQNR floors (``models.yaml``,
``flows.yaml``). Every problem is one ``InputError`` line naming the file and the field."""

from __future__ import annotations

from typing import Any

from kit.config_reader import Node
from kit.errors import InputError
from kit.numerics.criteria import SqnrFloor, Tolerance
from kit.numerics.model import CONSTANTS, FLOATING, ClassSpec, NumericsRules, Override


def read_tolerance(node: Node) -> Tolerance:
    """``{atol: A, rtol: R}``, both numbers >= 0."""
    bounds = node.section(("atol", "rtol"), what="a mapping of atol and rtol")
    return Tolerance(atol=bounds["atol"].number(minimum=0), rtol=bounds["rtol"].number(minimum=0))


def read_sqnr_floor(node: Node) -> SqnrFloor:
    """A number of decibels."""
    return SqnrFloor(node.number(what="a number of decibels"))


# -- the standard's numerics section -----------------------------------------------------------

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
