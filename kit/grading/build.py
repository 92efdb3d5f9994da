"""Building the report document: everything the file formats render, and what the signer signs.

The same records give a byte-identical report.json whatever their order; only the run's
start/finish times and the records' durations differ between two identical runs
(``strip_timings`` drops them for comparisons).
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

import kit
from kit.clock import RunDate
from kit.grading.blame import with_suspects
from kit.grading.evidence import collect_evidence
from kit.grading.grading import grade_run
from kit.grading.policy import is_complete_run, policy_violations
from kit.grading.released import is_released, load_released_kits
from kit.grading.sanitize import json_safe
from kit.grading.stale import stale_entries
from kit.hashing import kit_digest
from kit.patterns import select_ids
from kit.report.model import RunScope
from kit.report.summary import summarize
from kit.results import PERFORMANCE_KEY, TestRecord
from kit.standard import Standard
from kit.vendors import SkipEntry, SkipManifest, VendorProfile

#: 2: the flows tier (NOT_DELEGATED, summary.flows, flow facts on records).
SCHEMA_VERSION = 2


def vendor_section(vendor: VendorProfile) -> dict[str, Any]:
    """What the report records about the vendor. Its display name is its id: the profile's
    ``display_name`` is the vendor's own word, and who a vendor id is comes only from the
    root-signed keyring (``kit.signing.keyring.VendorIdentity``), which the run's machine may
    not hold; verify with trusted roots refuses any other name the keyring does not give it."""
    return {**vendor.summary(), "display_name": vendor.id}


def build_report(
    *,
    records: Iterable[TestRecord],
    standard: Standard,
    vendor: VendorProfile,
    skips: SkipManifest,
    environment: Mapping[str, Any],
    run: Mapping[str, Any],
    clock: RunDate,
) -> dict[str, Any]:
    return assemble_report(
        records=records,
        standard=standard,
        vendor=vendor_section(vendor),
        skips=skips,
        skip_path=_manifest_path(skips, vendor),
        environment=environment,
        run=run,
        clock=clock,
    )


def assemble_report(
    *,
    records: Iterable[TestRecord],
    standard: Standard,
    vendor: Mapping[str, Any],
    skips: SkipManifest,
    skip_path: str | None,
    environment: Mapping[str, Any],
    run: Mapping[str, Any],
    clock: RunDate,
    environments: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The report over ``records``, from the report's own sections (``build_report`` takes
    them from the vendor's profile; ``ckit merge`` from the shard reports). ``environments``:
    on a merged report, every shard's environment."""
    # A status the standard predates is recorded as it would have been (kit.results).
    ordered = sorted((_as_recorded(r, standard) for r in records), key=lambda r: r.id)
    _refuse_duplicates(ordered)
    # Advisory (no status, count or grade depends on it): kit.grading.blame.
    ordered = with_suspects(ordered, standard)
    today = clock.today
    recorded = {r.id for r in ordered}
    scope = RunScope.of_run(run)
    missing = missing_ids(standard, scope, recorded)
    complete = is_complete_run(standard, scope, recorded)
    run = {**run, "complete": complete}
    violations = policy_violations(ordered, standard, skips,
                                   dataclasses.replace(scope, complete=complete), today)
    digest = kit_digest()
    report: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "kit": {
            "version": kit.__version__,
            "digest": digest,
            "torch_release": standard.torch_release,
            "released": is_released(digest, load_released_kits()),
        },
        "standard": {"version": standard.version, "torch_release": standard.torch_release},
        "vendor": json_safe(vendor),
        "skip_manifest": skip_manifest_section(
            skips, skip_path, stale_entries(skips, standard, [r.id for r in ordered], complete),
            today),
        "environment": json_safe(environment),
        # The dates skip expiry was judged on, whatever the caller put there.
        "run": json_safe({**run, **clock.to_json()}),
        "records": [record_json(r) for r in ordered],
        "missing": missing,
        "summary": summarize(ordered, missing, run.get("tiers", ()), standard.statuses).to_json(),
        "policy": {"violations": violations},
    }
    if environments:
        report["environments"] = json_safe(list(environments))
    # Graded on what the report says, as anyone grading report.json again will.
    evidence = collect_evidence(standard, report)
    report["unaccounted"] = [u.to_json() for u in evidence.unaccounted]
    report["grade"] = grade_run(standard, evidence)
    return report


def _as_recorded(record: TestRecord, standard: Standard) -> TestRecord:
    status = standard.record_status(record.status)
    return record if status is record.status else dataclasses.replace(record, status=status)


def record_json(record: TestRecord) -> dict[str, Any]:
    data = record.to_json()
    data["message"] = json_safe(record.message)
    data["details"] = json_safe(record.details)
    return data


def _refuse_duplicates(records: Sequence[TestRecord]) -> None:
    # The runner promises one record per test; two would make every count ambiguous.
    twice = [test_id for test_id, n in Counter(r.id for r in records).items() if n > 1]
    if twice:
        raise ValueError(f"the runner produced {len(twice)} duplicate record id(s): {twice[0]}")


def missing_ids(standard: Standard, run: RunScope, recorded: AbstractSet[str]) -> list[str]:
    """Ids of the standard's locked lists (within the run's tiers and --select, and a shard's
    part) with no record.

    A tier without a locked list file has nothing to compare against and adds nothing.
    """
    select = run.select
    part = run.shard_tests
    expected: list[str] = []
    for tier in run.tiers:
        if tier in standard.test_lists and standard.test_list_path(tier).is_file():
            expected += standard.test_ids(tier)
    unrecorded = set(select_ids(expected, select)).difference(recorded)
    if part is not None:
        unrecorded.intersection_update(part)
    return sorted(unrecorded)


def skip_manifest_section(
    skips: SkipManifest, path: str | None, stale: Sequence[SkipEntry], today: dt.date
) -> dict[str, Any]:
    """``stale``: the entries that could skip nothing (``kit.grading.stale``: a narrowed run's
    unused entries are not stale)."""
    return {
        "path": path,
        "sha256": skips.sha256 or None,
        "entries": [e.to_json() for e in skips.entries],
        "stale": [e.to_json() for e in stale],
        "expired": [e.to_json() for e in skips.expired_entries(today)],
    }


def _manifest_path(skips: SkipManifest, vendor: VendorProfile) -> str | None:
    if skips.source is None:
        return None
    source = Path(skips.source).resolve()
    try:
        return source.relative_to(vendor.directory.resolve()).as_posix()
    except ValueError:
        return source.as_posix()  # a manifest given from outside the vendor directory


#: What the clock alone decides, which differs between two runs of the same tests: when the run
#: started and ended, each test's duration, and the day the clock said (two runs either side of
#: midnight differ there alone; a ``CKIT_TODAY`` override, which grading reads, stays).
TIMING_FIELDS = {"run": ("started_at", "finished_at", "clock_today"), "records": ("duration_s",)}


def strip_timings(report: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``report`` without what one execution alone decides, for comparing two runs:
    its times, and which worker log a crash or timeout left and what that log held."""
    stripped = copy.deepcopy(dict(report))
    for key in TIMING_FIELDS["run"]:
        stripped.get("run", {}).pop(key, None)
    for record in stripped.get("records", []):
        for key in TIMING_FIELDS["records"]:
            record.pop(key, None)
        for key in ("lowering_s", "worker_log", "worker_log_tail", PERFORMANCE_KEY):
            record.get("details", {}).pop(key, None)
    for totals in stripped.get("summary", {}).get("flows", {}).values():
        totals.pop("lowering_s", None)
    return stripped
