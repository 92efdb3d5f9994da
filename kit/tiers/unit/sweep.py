"""The sweep: every OpInfo of the release the unit list does not name, lightly (issue 38).

The unit list (``unit.yaml``'s ``ops``) names the ops a standard judges in depth: every sample,
every variant, required for a conformant grade. The ``sweep`` section adds every other OpInfo
of the installed release's ``op_db``, in each dtype its OpInfo supports on CPU among the unit
tier's, with a few samples and the variants the section names, under its own id source
(``unit/sweep/<op>/<dtype>/<sample>``) so that a standard's ``required`` globs can tell the two
apart. An OpInfo the kit cannot judge against the CPU is excluded by a named reason, never
silently absent: ``ckit standard show`` counts the exclusions per reason.

Light (no torch): which ops the release ships comes from the kit's cached listing of the
databases (``kit.tiers.unit.databases.installed_entries``).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from kit.tiers.unit.databases import installed_entries
from kit.tiers.unit.dtypes import UNIT_DTYPES
from kit.tiers.unit.entries import Comparison, OpEntry
from kit.tiers.unit.unit_id import SWEEP_SOURCE


@dataclass(frozen=True)
class Exclusion:
    """OpInfos the sweep leaves out for one reason the kit states: ``reason`` is the phrase
    ``ckit standard show`` counts them under."""

    reason: str
    ops: tuple[str, ...]
    why: str


@dataclass(frozen=True)
class Sweep:
    """``sweep:`` of ``unit.yaml``."""

    #: OpInfo samples per op and dtype, spread over its samples (first and last included).
    samples: int
    #: Names of ``coverage.variants`` rules the sweep's ops get (each within the rule's dtypes).
    variants: tuple[str, ...]
    exclusions: tuple[Exclusion, ...]
    #: Per op key, how it is judged where the default class would not do (``class``,
    #: ``reference``, ``compare_outputs``, ``numerics``, ``mutates``), as an op of the unit list.
    comparisons: tuple[tuple[str, Comparison], ...] = ()
    #: Per op key, the only dtypes it is tested in (where CPU's own kernel in another misses
    #: the reference by more than any bound of its class).
    dtype_limits: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: Per op key, the only variants of ``variants`` it gets (where one is ill-posed for it:
    #: the gradient of singular vectors, unique only up to sign).
    variant_limits: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def variants_of(self, op_key: str) -> tuple[str, ...]:
        return dict(self.variant_limits).get(op_key, self.variants)

    def exclusion_of(self, op_key: str) -> Exclusion | None:
        return next((e for e in self.exclusions if op_key in e.ops), None)

    def comparison_of(self, op_key: str) -> Comparison:
        return dict(self.comparisons).get(op_key, Comparison())


def sweep_entries(sweep: Sweep, listed: Collection[str]) -> tuple[OpEntry, ...]:
    """The sweep's ops on the installed release: each OpInfo of ``op_db`` not in ``listed`` (the
    unit list's keys) nor excluded, in the unit dtypes its OpInfo supports on CPU; none without
    torch."""
    found = installed_entries()
    if found is None:
        return ()
    entries = []
    for entry in found[1]:
        limit = dict(sweep.dtype_limits).get(entry.key, UNIT_DTYPES)
        dtypes = tuple(d for d in UNIT_DTYPES if d in entry.cpu_dtypes and d in limit)
        if (entry.database != "op_db" or not dtypes or entry.key in listed
                or sweep.exclusion_of(entry.key) is not None):
            continue
        entries.append(OpEntry(entry.name, entry.variant, dtypes,
                               sweep.comparison_of(entry.key), source=SWEEP_SOURCE))
    return tuple(entries)
