"""``ckit merge``: the shards of one run joined into one report, or a clear refusal.

A numbered checklist; the first failed step refuses the merge with one line naming the shard.

1. each directory holds a finished shard, signed: its envelope's signatures verify with a key of
   the keyring and that key is the report's vendor's (whoever can write a shard directory but
   holds no vendor key cannot flip a record and reseal it), its report as the envelope lists
   it (report.json: strict JSON, the report schema; a body, its standard's ``report_format:
   body``: canonical, typed, the statement's claim, the schema), a ``run.shard``
2. each shard report holds up under the standard it names: coverage, completeness, violations,
   summary and grade derived again from its records equal what it claims
   (``kit.grading.regrade``)
3. every shard is of the same run: kit digest (and this kit's), standard, vendor profile,
   skip manifest, torch release, tiers, --select, flows, shard count and balance
4. the shards are 0..N-1 of N, each exactly once: a duplicate or a missing one is named
5. each shard recorded only tests of its own part, and no test twice across shards

The merged report is then built from the shards' records the way ``ckit run`` builds one
(``kit.grading.build.assemble_report``), under their standard, so it grades as an unsharded run of
the same tests would, and is written in that standard's format.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from kit.clock import RunDate
from kit.errors import InputError, KitError
from kit.grading.build import assemble_report
from kit.grading.regrade import check_grade
from kit.hashing import kit_digest, sha256_bytes
from kit.report.model import Report, ShardRef
from kit.results import TestRecord
from kit.rundir import RunDir
from kit.standard import Standard, load_standard


class MergeRefused(InputError):
    """The shards cannot make one report; ``str()`` names the step and the shard."""


def _refuse(step: int, message: str) -> MergeRefused:
    return MergeRefused(f"merge step {step}: {message}")


@dataclass(frozen=True)
class ShardReport:
    directory: Path
    #: sha256 of the shard's report.json bytes, or of its body's digests
    #: (``kit.report.read.body_sha256``): the merged report names each shard by it.
    sha256: str
    report: Report
    shard: ShardRef

    @property
    def label(self) -> str:
        return f"shard {self.shard} ({self.directory})"


def _read_json_shard(envelope_path: Path, directory: Path,
                     keyring_dir: Path | None) -> tuple[str, Report]:
    """A report.json shard: verify's steps 1-8, then the report typed."""
    from kit.verification.verify import (
        step1_read_envelope,
        step2_check_payload_type,
        step3_require_signatures,
        step4_verify_signatures,
        step5_parse_statement,
        step6_check_vendor_binding,
        step7_check_subject_files,
        step8_check_report_matches,
    )

    envelope = step1_read_envelope(envelope_path)
    step2_check_payload_type(envelope)
    step3_require_signatures(envelope)
    signers = step4_verify_signatures(envelope, keyring_dir)
    statement = step5_parse_statement(envelope.payload)
    step6_check_vendor_binding(statement, signers)
    report_bytes = step7_check_subject_files(statement, directory)
    step8_check_report_matches(report_bytes, statement, envelope.payload)
    return sha256_bytes(report_bytes), Report.from_json(statement.report)


def _read_body_shard(envelope_path: Path, directory: Path,
                     keyring_dir: Path | None) -> tuple[str, Report]:
    """A body shard: its integrity (verify's steps 1-7), then read as its content check reads
    it (steps 8-9: canonical, the claim, the schema, each record's status and tier); step 2
    here derives the grade again, as step 12 would."""
    from kit.report.read import body_sha256
    from kit.verification.body_content import step8_read_body, step9_read_report
    from kit.verification.verify import verify_body_integrity

    checked = verify_body_integrity(envelope_path, keyring_dir, directory)
    report, _ = step9_read_report(step8_read_body(checked.files, checked.statement.claim))
    return body_sha256(checked.files), report


def step1_read_shard(directory: Path, keyring_dir: Path | None = None) -> ShardReport:
    """``keyring_dir``: the keyring the shards' signatures must verify with (None: the kit's)."""
    from kit.verification.verify_body import envelope_is_body

    envelope_path = RunDir(directory).envelope
    if not envelope_path.exists():
        raise _refuse(1, f"{directory}: no {envelope_path.name}: the shard has not finished "
                         f"(`ckit run --resume {directory}`) or this is no run directory")
    # The format is the signed statement's: each reading verifies the signatures first.
    read = _read_body_shard if envelope_is_body(envelope_path) else _read_json_shard
    try:
        # Each shard signed by its vendor's key, as an unsharded run is: the merge joins only
        # what the vendor's stack ran, and signs the one report again.
        digest, report = read(envelope_path, directory, keyring_dir)
    except KitError as exc:
        raise _refuse(1, f"{directory}: {exc}") from None
    if report.run.shard is None:
        raise _refuse(1, f"{directory}: not a shard (its run had no --shard); only the shards "
                         "of one run merge")
    return ShardReport(directory, digest, report, report.run.shard)


def step2_check_shard_holds_up(shard: ShardReport) -> None:
    try:
        check_grade(shard.report, shard_standard(shard))
    except KitError as exc:
        raise _refuse(2, f"{shard.label}: {exc}") from None


def _identity(report: Report) -> dict[str, Callable[[], Any]]:
    """What every shard of one run shares, by the words a refusal names it with."""
    run = report.run
    return {
        "kit digest": lambda: report.kit.digest,
        "standard": lambda: report.standard.version,
        "vendor": lambda: report.vendor_id,
        "vendor profile (sha256)": lambda: report.vendor.profile_sha256,
        "claimed flows": lambda: list(report.vendor.flows),
        "claimed dtypes": lambda: list(report.vendor.dtypes),
        "skip manifest (sha256)": lambda: report.skips.sha256,
        "torch release": lambda: report.environment["torch"]["version"],
        "tiers": lambda: list(report.run.tiers),
        "--select": lambda: list(report.run.select),
        "--timeout": lambda: run.timeout_s,
        "shard count": lambda: report.run.shard.count if report.run.shard else None,
        "shard balance": lambda: _balance(report.run.shard),
        "date override (CKIT_TODAY)": lambda: run.today.isoformat() if run.clock_override else None,
    }


def _balance(shard: ShardRef | None) -> tuple[str, str | None] | None:
    return None if shard is None else (shard.balance, shard.durations_sha256)


def step3_check_same_run(shards: Sequence[ShardReport]) -> None:
    first = shards[0]
    ours = kit_digest()
    if first.report.kit.digest != ours:
        raise _refuse(3, f"{first.label} was run by kit digest {first.report.kit.digest[:12]}, "
                         f"this kit is {ours[:12]}: merge with the kit that ran the shards")
    reference = {name: get() for name, get in _identity(first.report).items()}
    for shard in shards[1:]:
        for name, get in _identity(shard.report).items():
            if get() != reference[name]:
                raise _refuse(3, f"{shard.label} differs from {first.label} in {name} "
                                 f"({_shown(get())} vs {_shown(reference[name])}): "
                                 "not shards of one run")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def step4_check_shard_set(shards: Sequence[ShardReport]) -> None:
    count = shards[0].shard.count
    seen: dict[int, ShardReport] = {}
    for shard in shards:
        if shard.shard.index in seen:
            raise _refuse(4, f"{shard.directory} and {seen[shard.shard.index].directory} are "
                             f"both shard {shard.shard}: give each shard once")
        seen[shard.shard.index] = shard
    absent = [f"{k}/{count}" for k in range(count) if k not in seen]
    if absent:
        raise _refuse(4, f"missing shard(s) {', '.join(absent)} of {count}: merge all {count} "
                         "shards of the run")


def step5_check_disjoint(shards: Sequence[ShardReport]) -> None:
    owner: dict[str, ShardReport] = {}
    for shard in shards:
        part = set(shard.shard.tests)
        for test_id in shard.shard.tests:
            if test_id in owner:
                raise _refuse(5, f"{shard.label} and {owner[test_id].label} both plan test "
                                 f"{test_id!r}: overlapping shards")
            owner[test_id] = shard
        stray = next((r.id for r in shard.report.records if r.id not in part), None)
        if stray is not None:
            raise _refuse(5, f"{shard.label} records test {stray!r}, which is not in its part")


@dataclass(frozen=True)
class Merged:
    report: dict[str, Any]
    #: Tests of the run's scope that no shard recorded (the merged report lists them missing).
    missing: tuple[str, ...]


def shard_standard(shard: ShardReport) -> Standard:
    """The standard a shard's report names (as verify grades any report), not the one this
    kit's torch would pick: shards run on another release's machines merge anywhere."""
    return load_standard(shard.report.standard.version)


def check_shards(directories: Sequence[Path],
                 keyring_dir: Path | None = None) -> list[ShardReport]:
    """Steps 1-5; the shards in index order."""
    if not directories:
        raise InputError("ckit merge: give the shard directories to merge")
    shards = [step1_read_shard(directory, keyring_dir) for directory in directories]
    for shard in shards:
        step2_check_shard_holds_up(shard)
    step3_check_same_run(shards)
    step4_check_shard_set(shards)
    step5_check_disjoint(shards)
    return sorted(shards, key=lambda s: s.shard.index)


def merge_shards(directories: Sequence[Path], keyring_dir: Path | None = None) -> Merged:
    shards = check_shards(directories, keyring_dir)
    standard = shard_standard(shards[0])  # step 3: every shard's
    first = shards[0].report
    records: list[TestRecord] = [r for shard in shards for r in shard.report.records]
    report = assemble_report(
        records=records,
        standard=standard,
        vendor=first.vendor.to_json(),
        skips=first.skips,
        skip_path=first.skip_path,
        environment=first.environment,
        run=merged_run(shards),
        clock=merged_date(shards),
        environments=[
            {"shard": str(s.shard), "environment": s.report.environment} for s in shards
        ],
    )
    return Merged(report, tuple(report["missing"]))


def merged_run(shards: Sequence[ShardReport]) -> dict[str, Any]:
    """The run section of the whole: the shards' scope and times, and which shards it joined."""
    first = shards[0].report.run
    return {
        "tiers": list(first.tiers),
        "select": list(first.select),
        "timeout_s": first.timeout_s,
        "workers": sum(s.report.run.workers for s in shards),
        "started_at": _iso(min(s.report.run.started_at for s in shards)),
        "finished_at": _iso(max(s.report.run.finished_at for s in shards)),
        "merged_from": [_provenance(s) for s in shards],
    }


class ProvenanceJson(TypedDict):
    """One of the merged report's ``run.merged_from``: a shard, by its report's digest."""

    shard: str
    report_sha256: str
    records: int
    started_at: str
    finished_at: str


def _provenance(shard: ShardReport) -> ProvenanceJson:
    run = shard.report.run
    return {
        "shard": str(shard.shard),
        "report_sha256": shard.sha256,
        "records": len(shard.report.records),
        "started_at": run.started_text,
        "finished_at": run.finished_text,
    }


def _iso(moment: dt.datetime) -> str:
    return moment.isoformat(timespec="seconds")


def merged_date(shards: Sequence[ShardReport]) -> RunDate:
    """Skip expiry judged on the latest shard's date: an entry that expired while any shard
    ran has expired for the run."""
    latest = max(shards, key=lambda s: s.report.run.today).report.run
    return latest.run_date()


#: What the layout of a run (one process, workers, shards, devices) decides, not its tests.
LAYOUT_RUN_FIELDS = ("shard", "merged_from", "workers", "devices")


def layout_free(report: Mapping[str, Any]) -> dict[str, Any]:
    """``report`` without its times and its layout: a sharded run merged and one unsharded run
    of the same tests on the same stack must agree on everything left. The environment goes
    too: shards may run on several machines."""
    from kit.grading.build import strip_timings

    stripped = strip_timings(report)
    for key in LAYOUT_RUN_FIELDS:
        stripped.get("run", {}).pop(key, None)
    stripped.pop("environment", None)
    stripped.pop("environments", None)
    return stripped
