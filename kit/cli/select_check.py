"""A ``ckit run --select`` that matches no test stops before any worker starts, in one line.

Without this check such a run starts its workers and judge for nothing (about 20 s) and reports
an empty run. The line says what went wrong as far as the locked lists can tell: patterns are
case-sensitive (``Unit/...`` matches nothing), else the ids closest to the pattern (the longest
prefix of segments that matches, with its next segment's closest value), else one id of each
tier to show their shape.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from kit.errors import InputError
from kit.patterns import select_ids
from kit.report.id_order import in_natural_order
from kit.standard import Standard

#: Ids a hint names at most.
_SHOWN = 3
_SEPARATOR = "/"


def refuse_empty_selection(standard: Standard, tiers: Sequence[str],
                           select: Sequence[str]) -> None:
    """``InputError`` when ``select`` matches no locked test of ``tiers``; nothing when it
    matches one, or when a tier has no locked list (its tests are known only to its suite)."""
    if not select or not all(_locked(standard, tier) for tier in tiers):
        return
    ids = [test_id for tier in tiers for test_id in standard.test_ids(tier)]
    if not ids or select_ids(ids, tuple(select)):
        return
    hints = "; ".join(f"{pattern!r}: {_hint(pattern, ids)}" for pattern in select[:_SHOWN])
    shapes = ", ".join(standard.test_ids(tier)[0] for tier in tiers if standard.test_ids(tier))
    raise InputError(
        f"--select matches no test of tier(s) {', '.join(tiers)} in standard "
        f"{standard.version} ({hints}); ids look like {shapes}, and `*` matches within one "
        "segment, `**` across them (see `ckit run --list`)"
    )


def refuse_uncarried_tiers(standard: Standard, tiers: Sequence[str]) -> None:
    """``InputError`` when a ``--tier`` names a tier the standard does not carry (v1 predates
    the compile and distributed tiers): its report could not name it."""
    uncarried = [tier for tier in tiers if not standard.carries(tier)]
    if uncarried:
        carried = [tier for tier in tiers if standard.carries(tier)] or ["none of these"]
        raise InputError(f"--tier: standard {standard.version} has no {', '.join(uncarried)} "
                         f"tier (of these it carries {', '.join(carried)})")


def _locked(standard: Standard, tier: str) -> bool:
    return tier in standard.test_lists and standard.test_list_path(tier).is_file()


def _hint(pattern: str, ids: list[str]) -> str:
    lowered = select_ids([test_id.lower() for test_id in ids], (pattern.lower(),))
    if lowered:
        exact = {test_id.lower(): test_id for test_id in ids}
        return (f"patterns are case-sensitive; ignoring case it would match {len(lowered)}, "
                f"e.g. {exact[lowered[0]]}")
    closest = closest_ids(pattern, ids)
    return f"closest: {', '.join(closest)}" if closest else "no id shares its first segment"


def closest_ids(pattern: str, ids: list[str]) -> list[str]:
    """Ids under the longest prefix of ``pattern``'s segments that matches, its next segment
    replaced by the closest value there."""
    segments = pattern.split(_SEPARATOR)
    for depth in range(len(segments) - 1, 0, -1):
        head = _SEPARATOR.join(segments[:depth])
        under = select_ids(ids, (f"{head}/**",))
        if not under:
            continue
        values = sorted({test_id.split(_SEPARATOR)[depth] for test_id in under})
        wanted = segments[depth]
        # A wildcard segment is no typo: the pattern is too short or too long there.
        best = [wanted] if set(wanted) & set("*?") else _closest_value(wanted, values)
        mended = _SEPARATOR.join([*segments[:depth], *best, *segments[depth + 1:]])
        found = select_ids(under, (mended,)) or select_ids(under, (f"{mended}/**",)) or under
        return in_natural_order(found)[:_SHOWN]
    return []


def _closest_value(wanted: str, values: list[str]) -> list[str]:
    """The value nearest ``wanted``, ignoring case (``MUL`` is nearest ``mul``, not ``where``)."""
    by_lower = {value.lower(): value for value in values}
    best = difflib.get_close_matches(wanted.lower(), list(by_lower), n=1, cutoff=0.0)
    return [by_lower[best[0]]] if best else []
