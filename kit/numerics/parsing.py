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
    """``{atol: A, rtol: R}``, and optionally ``normwise: N``; all numbers >= 0."""
    bounds = node.section(("atol", "rtol"), ("normwise",), what="a mapping of atol and rtol")
    return Tolerance(
        atol=bounds["atol"].number(minimum=0),
        rtol=bounds["rtol"].number(minimum=0),
        normwise=bounds.optional("normwise", 0.0, Node.number, minimum=0),
    )


def read_sqnr_floor(node: Node) -> SqnrFloor:
    """A number of decibels."""
    return SqnrFloor(node.number(what="a number of decibels"))


# -- the standard's numerics section -----------------------------------------------------------

_CLASS_FIELDS = ("about", "exact", *CONSTANTS, "accumulates", "magnitude", "centred")
_FLAGS = ("exact", "accumulates", "magnitude", "centred")


def parse_numerics(raw: Any, where: str) -> NumericsRules:
    """``read_numerics`` of ``raw``, found at ``where`` (``<file>: <path>``)."""
    return read_numerics(Node.within(raw, where))


def read_numerics(node: Node) -> NumericsRules:
    """``{accumulation_dtypes: {dtype: dtype}, default_class: name, classes: {name: class}}``."""
    fields = node.section(
        ("accumulation_dtypes", "classes", "default_class"),
        # The training step's budget (``kit.numerics.training``), read apart; the least class of
        # a compiled graph's results (the compile tier).
        ("training", "compiled"),
        what="a mapping with accumulation_dtypes and classes",
    )
    accumulation = {
        _floating(dtype, dtype_node): dtype_node.choice(FLOATING)
        for dtype, dtype_node in fields["accumulation_dtypes"].entries()
    }
    classes = {
        name: _read_class(name, spec)
        for name, spec in fields["classes"].entries(non_empty=True, what="a mapping of op classes")
    }
    floors = sorted(name for name, spec in classes.items() if not spec.exact)
    compiled = fields.optional("compiled", None, _compiled_least_class, floors)
    return NumericsRules(accumulation, classes, fields["default_class"].choice(sorted(classes)),
                         compiled)


def _compiled_least_class(node: Node, classes: list[str]) -> str:
    """``compiled: {least_class: <class>}``."""
    return node.section(("least_class",), what="a mapping with least_class")["least_class"].choice(
        classes)


def _floating(dtype: str, node: Node) -> str:
    if dtype not in FLOATING:
        raise node.error(f"{dtype!r} is no floating dtype ({', '.join(FLOATING)})")
    return dtype


def _read_class(name: str, node: Node) -> ClassSpec:
    spec = node.section((), _CLASS_FIELDS, what="a mapping of an op class's constants")
    exact, accumulates, magnitude, centred = (
        spec.optional(flag, False, Node.flag) for flag in _FLAGS
    )
    spec.optional("about", "", Node.text)
    if exact:
        return ClassSpec(name, True, 0.0, 0.0, 0.0, False)
    return ClassSpec(
        name,
        False,
        spec["ulps"].number(minimum=0),
        spec.optional("normwise", 0.0, Node.number, minimum=0),
        spec.optional("accumulation", 0.0, Node.number, minimum=0),
        accumulates,
        magnitude,
        centred,
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
