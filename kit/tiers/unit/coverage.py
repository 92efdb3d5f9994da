"""Which OpInfo samples the unit tier runs per op, and the variants it adds (``coverage:``).

OpInfo's default samples are small and tame: no empty tensors, contiguous layouts, short
reductions, integers from [-9, 10), two or three inputs to variadic ops. Kernel faults that
only show outside that range (an abort on empty input, a saturating int32 add, a hang on a
4-way cat) went unseen. The ``coverage`` section of ``unit.yaml`` says, per op or op group:

- which samples run: all of them, except for ops declared ``spread`` (their sample functions
  sweep parameters combinatorially), which run a fixed number spread over theirs;
- whether every case calls again after other values of the same shapes (``repeat``:
  ``kit.tiers.unit.repeat``), and which ops are nondeterministic (not compared bitwise);
- whether samples that draw random numbers (dropout with ``p > 0``) are compared by value
  (``random``: they are not; ``kit.tiers.unit.checking``);
- which ops run no OpInfo sample of their own and get only the variants that name them, not
  those of ``all_ops`` (``variants_only``: the conversion ops, whose samples are their
  ``convert`` variant's);
- which variants are added: each rule names a kind of ``kit.tiers.unit.variants`` (which also
  reads the rule's fields) and gets the id ``unit/opinfo/<op>/<dtype>/<variant>``, or
  ``.../<variant>-<label>`` for each of a kind's several samples.

Every problem is a one-line ``InputError`` naming the file and field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kit.errors import InputError
from kit.tiers.unit.variants.registry import kind_claiming
from kit.tiers.unit.variants.rules import (
    Groups,
    VariantRule,
    count,
    op_list,
    reject_unknown,
)

#: The reserved group naming every op of the tier (not ``all``: that is an op).
ALL_OPS = "all_ops"
_SECTION_KEYS = {"spread", "groups", "variants", "repeat", "variants_only", "random"}


@dataclass(frozen=True)
class Coverage:
    """The ``coverage`` section: which samples run and which variants are added."""

    #: Samples run per (op, dtype) for the ops in ``spread_ops``, spread over theirs.
    spread_samples: int = 0
    spread_ops: tuple[str, ...] = ()
    variants: tuple[VariantRule, ...] = field(default_factory=tuple)
    #: Whether every case calls again after other values of the same shapes.
    repeat: bool = False
    #: Ops whose repeated calls may differ in bits (``repeat.nondeterministic``).
    nondeterministic: tuple[str, ...] = ()
    #: Ops running none of their OpInfo samples, only the variants naming them.
    variants_only: tuple[str, ...] = ()
    #: Whether a sample whose CPU call draws random numbers is NOT_APPLICABLE once its
    #: result's structure, dtypes and shapes hold, its values never compared (``random``).
    random_not_compared: bool = False

    def samples_cap(self, op_key: str) -> int | None:
        """How many samples the op runs per dtype (None: every OpInfo sample)."""
        if op_key in self.variants_only:
            return 0
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
    reject_unknown(raw, _SECTION_KEYS, where)
    groups = _parse_groups(raw.get("groups", {}), f"{where}.groups", op_keys)
    variants_only = _parse_variants_only(raw.get("variants_only"), f"{where}.variants_only",
                                         groups)
    groups[ALL_OPS] = tuple(key for key in op_keys if key not in variants_only)
    samples, spread_ops = _parse_spread(raw.get("spread"), f"{where}.spread", groups)
    raw_variants = raw.get("variants", {})
    if not isinstance(raw_variants, dict):
        raise InputError(f"{where}.variants: expected a mapping of variant name to its ops")
    variants = tuple(
        _parse_variant(str(name), spec, f"{where}.variants.{name}", groups)
        for name, spec in raw_variants.items()
    )
    repeat, nondeterministic = _parse_repeat(raw.get("repeat"), f"{where}.repeat", groups)
    random_not_compared = _parse_random(raw.get("random"), f"{where}.random")
    return Coverage(samples, spread_ops, variants, repeat, nondeterministic, variants_only,
                    random_not_compared)


def _parse_random(raw: Any, where: str) -> bool:
    """``random: {why}``: samples drawing random numbers are not compared by value."""
    if raw is None:
        return False
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected a mapping with why")
    reject_unknown(raw, {"why"}, where)
    why = raw.get("why")
    if not isinstance(why, str) or not why.strip():
        raise InputError(f"{where}.why: required: why random samples are not compared by value")
    return True


def _parse_variants_only(raw: Any, where: str, groups: Groups) -> tuple[str, ...]:
    """``variants_only: {ops: [ops], why}``: ``why`` is required."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected a mapping with ops and why")
    reject_unknown(raw, {"ops", "why"}, where)
    why = raw.get("why")
    if not isinstance(why, str) or not why.strip():
        raise InputError(f"{where}.why: required: why these ops run no OpInfo sample")
    return op_list(raw.get("ops"), f"{where}.ops", groups)


def _parse_repeat(raw: Any, where: str, groups: Groups) -> tuple[bool, tuple[str, ...]]:
    """``repeat: {nondeterministic?: [ops], why?}``: ``why`` is required with ops."""
    if raw is None:
        return False, ()
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected a mapping with nondeterministic and why")
    reject_unknown(raw, {"nondeterministic", "why"}, where)
    if "nondeterministic" not in raw:
        return True, ()
    ops = op_list(raw["nondeterministic"], f"{where}.nondeterministic", groups)
    why = raw.get("why")
    if not isinstance(why, str) or not why.strip():
        raise InputError(f"{where}.why: required with nondeterministic: why they may differ")
    return True, ops


def _parse_groups(raw: Any, where: str, op_keys: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Named op lists, plus ``all`` and every op key as a group of one."""
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected a mapping of group name to op keys")
    groups: dict[str, tuple[str, ...]] = {key: (key,) for key in op_keys}
    for name, members in raw.items():
        if name == ALL_OPS or name in groups:
            raise InputError(f"{where}.{name}: the name is taken by an op or by {ALL_OPS!r}")
        groups[str(name)] = op_list(members, f"{where}.{name}", groups)
    groups[ALL_OPS] = op_keys
    return groups


def _parse_spread(raw: Any, where: str, groups: Groups) -> tuple[int, tuple[str, ...]]:
    if raw is None:
        return 0, ()
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected a mapping with samples and ops")
    reject_unknown(raw, {"samples", "ops"}, where)
    samples = count(raw.get("samples"), 2, f"{where}.samples", "the samples run per dtype")
    return samples, op_list(raw.get("ops"), f"{where}.ops", groups)


def _parse_variant(name: str, raw: Any, where: str, groups: Groups) -> VariantRule:
    kind = kind_claiming(name, where)
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected a mapping")
    return kind.rule(name, raw, where, groups)
