"""A variant rule of ``unit.yaml``'s ``coverage.variants``, and the fields every kind reads.

Light (no torch): the unit tier's config is read by processes that never run an op.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kit.config_reader import Node
from kit.errors import InputError
from kit.numerics.model import Widening
from kit.tiers.unit.dtypes import parse_dtypes
from kit.tiers.unit.entries import EXACT_CLASS

#: A dimension token of ``large``: the dimension the sample itself reduces over.
SAMPLE_DIM = "dim"

#: Per positional operand of the op (its input first), the dimension ``large`` grows: an
#: index, ``dim`` (the sample's own reduced dimension) or None (left as it is).
GrownDims = tuple[int | str | None, ...]

#: Op groups by name: every op key is a group of one, ``all_ops`` every op.
Groups = Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class VariantRule:
    """One variant of the standard: its id segment, how it is built and which tests get it."""

    #: The id segment: ``empty``, ``large``, ``arity4``.
    name: str
    #: The name of the kind that builds it (``kit.tiers.unit.variants.registry``).
    kind: str
    #: Op keys (groups expanded).
    ops: tuple[str, ...]
    #: Dtypes it applies to (None: every dtype the op is tested in).
    dtypes: tuple[str, ...] | None = None
    #: ``large``: the grown dimensions per op key; other kinds: unused.
    dims: tuple[tuple[str, GrownDims], ...] = ()
    #: ``large``: the size the grown dimensions reach at least; ``arity``: the input count.
    size: int = 0
    #: ``scale``: the powers of two its inputs go past, and the memory budget in MiB.
    powers: tuple[int, ...] = ()
    memory_budget_mib: int = 0
    #: ``backward``: how the op's bound widens for its gradients, and the class judging the
    #: gradients of an op of the ``exact`` class (their sums are rounded).
    widening: Widening | None = None
    exact_class: str = ""
    #: ``autocast``: the lower-precision dtypes the op runs under autocast in.
    autocast: tuple[str, ...] = ()

    def applies(self, op_key: str, dtype: str) -> bool:
        return op_key in self.ops and (self.dtypes is None or dtype in self.dtypes)

    def grown_dims(self, op_key: str) -> GrownDims:
        return dict(self.dims).get(op_key, ())


def op_list(raw: Any, where: str, groups: Groups) -> tuple[str, ...]:
    """A non-empty list of op keys and group names, expanded, first mention first."""
    if not isinstance(raw, list) or not raw:
        raise InputError(f"{where}: expected a non-empty list of op keys or groups")
    keys: list[str] = []
    for name in raw:
        keys += [k for k in members(name, groups, where) if k not in keys]
    return tuple(keys)


def members(name: Any, groups: Groups, where: str) -> tuple[str, ...]:
    if not isinstance(name, str) or name not in groups:
        raise InputError(f"{where}: {name!r} is neither an op of the tier nor a group")
    return groups[name]


def dtype_list(raw: Any, where: str) -> tuple[str, ...] | None:
    return None if raw is None else parse_dtypes(Node.within(raw, where))


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def count(value: Any, least: int, where: str, what: str) -> int:
    if not is_int(value) or value < least:
        raise InputError(f"{where}: expected {what}, an integer of at least {least}")
    return int(value)


def reject_unknown(raw: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(map(str, raw)) - allowed)
    if unknown:
        raise InputError(f"{where}: unknown field {unknown[0]!r} (allowed: {sorted(allowed)})")


def class_name(raw: Mapping[str, Any], field: str, where: str) -> str:
    """An op class a rule names, other than ``exact`` (whether the standard's numerics know it
    is checked where a bound is made)."""
    name = raw.get(field)
    if not isinstance(name, str) or not name or name == EXACT_CLASS:
        raise InputError(
            f"{where}.{field}: expected the name of an op class other than {EXACT_CLASS}")
    return name
