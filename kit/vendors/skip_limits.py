"""Skip-manifest entries the standard never allows: validate and run start refuse them.

An entry may not skip a never-skip test, and may not outlive the standard's release by more than
``skip_policy.max_skip_days`` (a date the vendor picks, such as 9999-12-31, is no limit at all).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kit.errors import InputError
from kit.patterns import matches
from kit.standard import Standard
from kit.vendors.skips import SkipEntry, SkipManifest


def locked_lists(standard: Standard) -> dict[str, list[str]]:
    """The standard's locked test lists that exist so far, by tier."""
    tiers = [t for t in standard.test_lists if standard.test_list_path(t).is_file()]
    return {tier: standard.test_ids(tier) for tier in tiers}


def all_locked_ids(standard: Standard) -> list[str]:
    return [test_id for ids in locked_lists(standard).values() for test_id in ids]


def refuse_disallowed_entries(
    manifest: SkipManifest, standard: Standard, test_ids: Iterable[str]
) -> None:
    """Raise ``InputError`` (one line) for the first entry the standard does not allow."""
    protected = [t for t in test_ids if not standard.may_skip(t)]
    for index, entry in enumerate(manifest.entries):
        where = f"{manifest.source}: skips.{index} ({entry.test!r})"
        problem = too_long_lived(entry, standard) or _never_skip_problem(
            entry, standard, protected
        )
        if problem:
            raise InputError(f"{where}: {problem}")


def too_long_lived(entry: SkipEntry, standard: Standard) -> str | None:
    """Why ``entry`` expires too late for ``standard``; None when it does not."""
    if entry.expires <= standard.latest_skip_expiry:
        return None
    return (
        f"expires {entry.expires}, more than {standard.max_skip_days} days after standard "
        f"{standard.version} was released ({standard.released}); set "
        f"{standard.latest_skip_expiry} or earlier"
    )


def _never_skip_problem(
    entry: SkipEntry, standard: Standard, protected: Sequence[str]
) -> str | None:
    hits = [t for t in protected if matches(t, entry.test)]
    if not hits:
        return None
    more = f" (and {len(hits) - 1} more)" if len(hits) > 1 else ""
    return (
        f"matches never-skip test {hits[0]!r}{more}; standard "
        f"{standard.version} never allows skipping it: narrow the pattern or remove the entry"
    )
