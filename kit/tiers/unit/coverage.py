"""Which OpInfo samples the unit tier runs per op, and the variants it adds (``coverage:``).

OpInfo's default samples are small and tame: no empty tensors, contiguous layouts, short
reductions, integers from [-9, 10), two or three inputs to variadic ops. Kernel faults that
only show outside that range (an abort on empty input, a saturating int32 add, a hang on a
4-way cat) went unseen. The ``coverage`` section of ``unit.yaml`` says, per op or op group:

- which samples run: all of them, except for ops declared ``spread`` (their sample functions
  sweep parameters combinatorially), which run a fixed number spread over theirs;
- which variants are added (``kit.tiers.unit.variants`` builds them): ``empty``, ``noncontiguous``,
  ``expanded``, ``large``, ``extremes`` and ``arity<N>``, each with the id
  ``unit/opinfo/<op>/<dtype>/<variant>``.

Every problem is a one-line ``InputError`` naming the file and field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kit.config_reader import Node
from kit.errors import InputError
from kit.tiers.unit.dtypes import parse_dtypes

#: The reserved group naming every op of the tier (not ``all``: that is an op).
ALL_OPS = "all_ops"
#: How each variant is built, by the variant's name; ``arity<N>`` gives a variadic op N inputs.
VARIANT_KINDS = ("empty", "noncontiguous", "expanded", "large", "extremes", "arity")
#: Integer dtypes, the only ones ``extremes`` applies to (its values are the dtype's limits).
INTEGER_DTYPES = ("int64", "int32")
#: A dimension token of ``large``: the dimension the sample itself reduces over.
SAMPLE_DIM = "dim"
_ARITY = re.compile(r"arity([1-9][0-9]{0,3})\Z")
_SECTION_KEYS = {"spread", "groups", "variants"}
_VARIANT_KEYS = {"ops", "dtypes"}
_LARGE_KEYS = {"length", "dims", "dtypes"}

#: Per positional operand of the op (its input first), the dimension ``large`` grows: an
#: index, ``dim`` (the sample's own reduced dimension) or None (left as it is).
GrownDims = tuple[int | str | None, ...]


@dataclass(frozen=True)
class VariantRule:
    """One variant of the standard: its id segment, how it is built and which tests get it."""

    #: The id segment: ``empty``, ``large``, ``arity4``.
    name: str
    #: One of ``VARIANT_KINDS``.
    kind: str
    #: Op keys (groups expanded).
    ops: tuple[str, ...]
    #: Dtypes it applies to (None: every dtype the op is tested in).
    dtypes: tuple[str, ...] | None = None
    #: ``large``: the grown dimensions per op key; ``arity``: unused.
    dims: tuple[tuple[str, GrownDims], ...] = ()
    #: ``large``: the size the grown dimensions reach at least; ``arity``: the input count.
    size: int = 0

    def applies(self, op_key: str, dtype: str) -> bool:
        return op_key in self.ops and (self.dtypes is None or dtype in self.dtypes)

    def grown_dims(self, op_key: str) -> GrownDims:
        return dict(self.dims).get(op_key, ())


@dataclass(frozen=True)
class Coverage:
    """The ``coverage`` section: which samples run and which variants are added."""

    #: Samples run per (op, dtype) for the ops in ``spread_ops``, spread over theirs.
    spread_samples: int = 0
    spread_ops: tuple[str, ...] = ()
    variants: tuple[VariantRule, ...] = field(default_factory=tuple)

    def samples_cap(self, op_key: str) -> int | None:
        """How many samples the op runs per dtype (None: every OpInfo sample)."""
        return self.spread_samples if op_key in self.spread_ops else None

    def variants_of(self, op_key: str, dtype: str) -> tuple[VariantRule, ...]:
        return tuple(rule for rule in self.variants if rule.applies(op_key, dtype))


def parse_coverage(raw: Any, where: str, op_keys: tuple[str, ...]) -> Coverage:
    """``raw`` is the section (None: every sample, no variants); ``op_keys`` the tier's ops."""
    if raw is None:
        return Coverage()
    where = f"{where}: coverage"
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected a mapping with spread, groups and variants")
    _reject_unknown(raw, _SECTION_KEYS, where)
    groups = _parse_groups(raw.get("groups", {}), f"{where}.groups", op_keys)
    samples, spread_ops = _parse_spread(raw.get("spread"), f"{where}.spread", groups)
    raw_variants = raw.get("variants", {})
    if not isinstance(raw_variants, dict):
        raise InputError(f"{where}.variants: expected a mapping of variant name to its ops")
    variants = tuple(
        _parse_variant(str(name), spec, f"{where}.variants.{name}", groups)
        for name, spec in raw_variants.items()
    )
    return Coverage(samples, spread_ops, variants)


def _parse_groups(raw: Any, where: str, op_keys: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Named op lists, plus ``all`` and every op key as a group of one."""
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected a mapping of group name to op keys")
    groups: dict[str, tuple[str, ...]] = {key: (key,) for key in op_keys}
    for name, members in raw.items():
        if name == ALL_OPS or name in groups:
            raise InputError(f"{where}.{name}: the name is taken by an op or by {ALL_OPS!r}")
        groups[str(name)] = _op_list(members, f"{where}.{name}", groups)
    groups[ALL_OPS] = op_keys
    return groups


def _parse_spread(raw: Any, where: str, groups: Mapping[str, tuple[str, ...]]) -> tuple[
    int, tuple[str, ...]
]:
    if raw is None:
        return 0, ()
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected a mapping with samples and ops")
    _reject_unknown(raw, {"samples", "ops"}, where)
    samples = _count(raw.get("samples"), 2, f"{where}.samples", "the samples run per dtype")
    return samples, _op_list(raw.get("ops"), f"{where}.ops", groups)


def _parse_variant(
    name: str, raw: Any, where: str, groups: Mapping[str, tuple[str, ...]]
) -> VariantRule:
    arity = _ARITY.match(name)
    kind = "arity" if arity else name
    if kind not in VARIANT_KINDS:
        raise InputError(
            f"{where}: unknown variant (expected one of {list(VARIANT_KINDS[:-1])} or arity<N>)"
        )
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected a mapping")
    dtypes = _parse_dtypes(raw.get("dtypes"), f"{where}.dtypes")
    if kind == "extremes" and (dtypes is None or not set(dtypes) <= set(INTEGER_DTYPES)):
        raise InputError(f"{where}.dtypes: extremes needs integer dtypes from {INTEGER_DTYPES}")
    if kind == "large":
        _reject_unknown(raw, _LARGE_KEYS, where)
        size = _count(raw.get("length"), 2, f"{where}.length", "the grown dimensions' size")
        dims = _parse_grown_dims(raw.get("dims"), f"{where}.dims", groups)
        return VariantRule(name, kind, tuple(k for k, _ in dims), dtypes, dims, size)
    _reject_unknown(raw, _VARIANT_KEYS, where)
    ops = _op_list(raw.get("ops"), f"{where}.ops", groups)
    return VariantRule(name, kind, ops, dtypes, size=int(arity.group(1)) if arity else 0)


def _parse_grown_dims(
    raw: Any, where: str, groups: Mapping[str, tuple[str, ...]]
) -> tuple[tuple[str, GrownDims], ...]:
    if not isinstance(raw, dict) or not raw:
        raise InputError(f"{where}: expected a mapping of op or group to its grown dimensions")
    found: dict[str, GrownDims] = {}
    for name, dims in raw.items():
        here = f"{where}.{name}"
        if not isinstance(dims, list) or not dims or not all(map(_is_dim_token, dims)):
            raise InputError(
                f"{here}: expected one entry per operand: a dimension index, "
                f"{SAMPLE_DIM!r} or null, e.g. [-1, -2]"
            )
        for key in _members(name, groups, here):
            if key in found:
                raise InputError(f"{here}: op {key!r} is given grown dimensions twice")
            found[key] = tuple(dims)
    return tuple(found.items())


def _is_dim_token(value: Any) -> bool:
    return value is None or value == SAMPLE_DIM or _is_int(value)


def _op_list(
    raw: Any, where: str, groups: Mapping[str, tuple[str, ...]]
) -> tuple[str, ...]:
    if not isinstance(raw, list) or not raw:
        raise InputError(f"{where}: expected a non-empty list of op keys or groups")
    keys: list[str] = []
    for name in raw:
        keys += [k for k in _members(name, groups, where) if k not in keys]
    return tuple(keys)


def _members(name: Any, groups: Mapping[str, tuple[str, ...]], where: str) -> tuple[str, ...]:
    if not isinstance(name, str) or name not in groups:
        raise InputError(f"{where}: {name!r} is neither an op of the tier nor a group")
    return groups[name]


def _parse_dtypes(raw: Any, where: str) -> tuple[str, ...] | None:
    return None if raw is None else parse_dtypes(Node.within(raw, where))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _count(value: Any, least: int, where: str, what: str) -> int:
    if not _is_int(value) or value < least:
        raise InputError(f"{where}: expected {what}, an integer of at least {least}")
    return int(value)


def _reject_unknown(raw: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(map(str, raw)) - allowed)
    if unknown:
        raise InputError(f"{where}: unknown field {unknown[0]!r} (allowed: {sorted(allowed)})")
