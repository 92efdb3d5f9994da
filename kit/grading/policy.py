"""Skip-policy violations: what keeps an otherwise passing run from being conformant.

A violation is a SKIPPED test the standard never allows skipping, an expired skip-manifest
entry (it skips nothing any more and counts as a failure), an entry that outlives the standard's
limit (``ckit vendors validate`` and run start refuse it; a report still says so), or a run
narrowed by --tier or --select. Stale entries (matching no test) are reported by the report but
are not violations.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Sequence

from kit.report.model import RunScope
from kit.results import RecordFields, Status
from kit.standard import Standard
from kit.tiers.registry import complete_run_tiers
from kit.vendors import SkipEntry, SkipManifest
from kit.vendors.skip_limits import too_long_lived

#: The tiers a run must cover to be complete; deploy smoke checks are optional.

NEVER_SKIP = "never-skip"
EXPIRED_SKIP = "expired-skip"
SKIP_TOO_LONG = "skip-too-long"
INCOMPLETE_RUN = "incomplete-run"
#: Every kind, as report.schema.json lists them.
KINDS = (NEVER_SKIP, EXPIRED_SKIP, SKIP_TOO_LONG, INCOMPLETE_RUN)


def is_complete_run(standard: Standard, run: RunScope, recorded: Collection[str]) -> bool:
    """Whether the records cover the whole standard: every locked test of every reported tier.

    Judged from what was recorded, not from the command line: a shard, a --select or a --tier
    run lacks tests; shards merged back together do not. A tier without a locked list has
    nothing to count, so there only an unnarrowed run of that tier covers it.
    """
    have = recorded if isinstance(recorded, set | frozenset) else set(recorded)
    unnarrowed = not run.select and run.shard_label is None
    return all(
        have.issuperset(standard.test_ids(tier))
        if _has_locked_list(standard, tier)
        else unnarrowed and tier in run.tiers
        for tier in complete_run_tiers(standard)
    )


def _has_locked_list(standard: Standard, tier: str) -> bool:
    return tier in standard.test_lists and standard.test_list_path(tier).is_file()


def policy_violations(
    records: Sequence[RecordFields],
    standard: Standard,
    skips: SkipManifest,
    run: RunScope,
    today: dt.date,
) -> list[dict[str, str]]:
    """Violations in a stable order: run, expired entries, over-long entries, skipped tests."""
    violations: list[dict[str, str]] = []
    # Only a run that says it is complete may be graded conformant; a missing flag is not proof.
    if run.complete is not True:
        violations.append({"kind": INCOMPLETE_RUN, "message": _incomplete_message(run)})
    for entry in skips.expired_entries(today):
        violations.append({"kind": EXPIRED_SKIP, "entry": entry.test, "message": _expired(entry)})
    for entry in skips.entries:
        if problem := too_long_lived(entry, standard):
            message = f"{_entry_words(entry)} {problem}"
            violations.append({"kind": SKIP_TOO_LONG, "entry": entry.test, "message": message})
    skipped_status = Status.SKIPPED  # looked up once, not once a record
    skipped = [record for record in records if record.status is skipped_status]
    for record in sorted(skipped, key=lambda r: r.id):
        if not standard.may_skip(record.id):
            decision = skips.decide(record.id, today)
            message = _never_skip_message(record.id, standard.version, decision.entry)
            violations.append({"kind": NEVER_SKIP, "test": record.id, "message": message})
    return violations


def _incomplete_message(run: RunScope) -> str:
    narrowed = []
    if run.tiers:
        narrowed.append("tiers " + ", ".join(run.tiers))
    if run.select:
        narrowed.append("select " + ", ".join(repr(s) for s in run.select))
    if run.shard_label is not None:
        narrowed.append(f"shard {run.shard_label}")
    how = f" ({'; '.join(narrowed)})" if narrowed else ""
    fix = ("merge every shard (`ckit merge`)" if run.shard_label is not None
           else "rerun without narrowing --tier/--select")
    return (
        f"the run was narrowed{how} and does not cover the whole standard; "
        f"{fix} for a conformant grade"
    )


def _entry_words(entry: SkipEntry) -> str:
    return f"skip manifest entry {entry.test!r} ({entry.reason}, {entry.tracking})"


def _expired(entry: SkipEntry) -> str:
    return (
        f"{_entry_words(entry)} expired on {entry.expires.isoformat()} and skips nothing any "
        "more; fix the tests it covers, or renew the entry with a new expiry date"
    )


def _never_skip_message(test_id: str, version: str, entry: SkipEntry | None) -> str:
    by = f"skip manifest entry {entry.test!r}" if entry else "the skip manifest"
    return (
        f"{test_id} was skipped by {by}, but standard {version} never allows skipping it; "
        "make the test pass or remove the entry"
    )
