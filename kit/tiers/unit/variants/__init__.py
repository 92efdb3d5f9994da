"""Variants: samples beyond OpInfo's defaults, built from an op's own OpInfo samples.

OpInfo's samples are what its authors found representative, not what breaks kernels: the
unit tier adds, per op and dtype, the variants ``unit.yaml``'s ``coverage`` section declares
(``kit.tiers.unit.coverage``). Each kind is one module of this package (``registry.KINDS``
lists them; ``interface.VariantKind`` is what one provides): ``empty``, ``noncontiguous``,
``expanded``, ``large``, ``extremes``, ``arity<N>``.

A kind builds its samples from candidates in a fixed order of preference, each under a seed
from (op, dtype, variant, candidate); a sample is part of the standard only where the CPU
reference accepts it, so there is none (no test) when CPU accepts no candidate. Every process
rebuilds the same samples.
"""

from __future__ import annotations

from typing import Any

from kit.tiers.unit.entries import OpEntry
from kit.tiers.unit.samples import cpu_accepts, opinfo_samples
from kit.tiers.unit.variants.interface import VariantSource
from kit.tiers.unit.variants.registry import kind_named
from kit.tiers.unit.variants.rules import VariantRule

#: Built variants by (op name, OpInfo variant, dtype, rule, tested positions): a worker runs
#: each once, but ``ckit standard lock`` asks for every one several times.
_BUILT: dict[tuple[str, str, str, VariantRule, tuple[int, ...]], dict[str, object]] = {}


def variant_samples(
    entry: OpEntry, dtype: str, rule: VariantRule, tested: tuple[int, ...]
) -> dict[str, object]:
    """The rule's samples for the op in ``dtype`` by id segment; empty where CPU accepts none."""
    key = (entry.name, entry.variant, dtype, rule, tested)
    if key not in _BUILT:
        _BUILT[key] = _build(entry, dtype, rule, tested)
    return _BUILT[key]


def _build(entry: OpEntry, dtype: str, rule: VariantRule, tested: tuple[int, ...]
           ) -> dict[str, object]:
    kind = kind_named(rule.kind)
    source = VariantSource(entry, dtype, rule, opinfo_samples(entry, dtype), tested)
    label = f"{entry.key} {rule.name}"

    def accepts(sample: Any) -> bool:
        return cpu_accepts(kind.case(entry, dtype, sample, label))

    return kind.build(source, accepts)


def variant_case_of(entry: OpEntry, dtype: str, rule: VariantRule, segment: str,
                    tested: tuple[int, ...]) -> Any:
    """The unit case an id's variant segment names, or None where there is no such sample.

    A kind that ``builds_by_name`` builds that one sample, without CPU's check: the locked
    list, made where the check ran, holds the id only if CPU accepted it (a scale input is
    2^24 elements: its check is two CPU calls on it, in the worker and the judge alike)."""
    kind = kind_named(rule.kind)
    built = _BUILT.get((entry.name, entry.variant, dtype, rule, tested))
    if kind.builds_by_name and built is None:
        source = VariantSource(entry, dtype, rule, opinfo_samples(entry, dtype), tested)
        sample = kind.sample_named(source, segment)
    else:
        # Built already in this process (``ckit standard lock`` generated the ids): the very
        # samples, not a rebuild per digest, vacuity and random-draw check.
        sample = (built if built is not None else variant_samples(entry, dtype, rule, tested)
                  ).get(segment)
    if sample is None:
        return None
    return kind.case(entry, dtype, sample, f"{entry.key} sample {segment}")
