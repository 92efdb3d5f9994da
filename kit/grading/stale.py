"""Which skip-manifest entries a report calls stale: those that could skip nothing.

An entry is stale when it matches no test the standard has. A complete run holds every test, so
there an entry matching no record is stale. A narrowed run (--tier, --select, a shard) holds only
some: an entry it did not use may well skip a test the run left out, so there an entry is stale
only where the standard's locked lists hold no test it matches (or it names a tier the kit does
not have); an entry of a tier without a locked list is judged by a complete run alone.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from kit.patterns import select_ids
from kit.standard import Standard
from kit.test_ids import tier_of
from kit.tiers.registry import tier_names
from kit.vendors import SkipEntry, SkipManifest
from kit.vendors.skip_limits import locked_lists

_WILDCARDS = frozenset("*?")


def stale_entries(skips: SkipManifest, standard: Standard, recorded: Sequence[str],
                  complete: bool) -> list[SkipEntry]:
    """The entries of ``skips`` that could skip no test, in the manifest's order."""
    if complete or not skips.entries:
        return skips.stale_entries(recorded)
    locked = locked_lists(standard)
    return [entry for entry in skips.entries
            if _matches_nothing(entry.test, _candidates(entry.test, locked, recorded))]


def _candidates(pattern: str, locked: dict[str, list[str]],
                recorded: Sequence[str]) -> Collection[str] | None:
    """The ids ``pattern`` is judged against; None when a narrowed run cannot judge it."""
    tier = tier_of(pattern)
    if _WILDCARDS & set(tier):
        every = [test_id for ids in locked.values() for test_id in ids]
        return None if len(locked) < len(tier_names()) else [*every, *recorded]
    if tier in locked:
        return [*locked[tier], *recorded]
    if tier not in tier_names():
        return ()  # no tier of that name (``Unit/...``): it can never match
    return None  # its tier has no locked list: only a complete run can tell


def _matches_nothing(pattern: str, candidates: Collection[str] | None) -> bool:
    return candidates is not None and not select_ids(candidates, (pattern,))
