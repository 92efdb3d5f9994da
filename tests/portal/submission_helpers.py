"""Builders for the gate and portal tests: a shared repository of real, signed submissions.

Reports are built with the kit's own builder over the standard's locked test ids (the cpu profile
filed under each vendor's id), signed with real keys, filed under
``submissions/<release>/<vendor>/<kit>/<run-id>/``, and audited by running ``verify_envelope``
on each submission: one check that passes, or fails with the verifier's line.

A plain module (not conftest) imported by name: tests/portal is put on sys.path by the tests.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kit.clock import RunDate
from kit.device import DeviceInfo
from kit.errors import VerificationError
from kit.formats.files import write_report_files
from kit.grading import build_report, collect_environment
from kit.hashing import sha256_bytes
from kit.patterns import matches_any
from kit.repository.interface import CheckResult, RepositoryAudit, SubmissionAudit
from kit.repository.layout import SubmissionKey, find_submissions, run_id_for, torch_release_of
from kit.results import Status, TestRecord
from kit.rundir import ENVELOPE_NAME
from kit.signing.dsse import decode_envelope
from kit.signing.keyring import add_public_key
from kit.signing.keys import generate_private_key, private_key_pem, write_private_key
from kit.signing.sign import sign_output_dir
from kit.standard import load_standard
from kit.strict_json import loads_strict
from kit.tiers.registry import tier_names
from kit.vendors import SkipManifest, load_vendor
from kit.verification.verify import verify_envelope

#: The moment the tests' world stands at; every run finishes some hours before it.
NOW = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.UTC)
#: The tests a small run covers: every locked deploy test and every model in the eager flow
#: (7 + 21); the models' program flows are what a vendor claims on top.
SMALL_SELECT = ("deploy/*", "models/*/*/eager")


@dataclass(frozen=True)
class Outcome:
    """What a test did, when not PASS."""

    status: Status
    message: str
    details: Mapping[str, Any] = field(default_factory=dict)


def numeric_failure(max_abs: float = 0.00125, max_rel: float = 0.031) -> Outcome:
    details = {"max_abs_err": max_abs, "max_rel_err": max_rel, "mismatched": 3, "numel": 64}
    return Outcome(Status.FAIL_NUMERIC, "3/64 elements differ", details)


def source_absent(source: str) -> Outcome:
    reason = f"optional model source {source} is not installed"
    details = {"na_reason": "optional-source-absent", "reason": reason}
    return Outcome(Status.NOT_APPLICABLE, reason, details)


@dataclass(frozen=True)
class Run:
    """One submission to build: who ran it, which kit, when it finished, what went wrong."""

    vendor: str
    finished: dt.datetime
    kit_version: str = "0.1.0"
    #: Patterns of the locked ids the run covers; empty (the default): every tier, in full.
    select: tuple[str, ...] = ()
    #: Test id -> its outcome; every other selected test passes.
    outcomes: Mapping[str, Outcome] = field(default_factory=dict)
    docs_url: str | None = None
    #: A ``ckit run --canary`` (``run.canary`` signed in the report).
    canary: bool = False
    #: The standard the run is judged by (default: the current one), and so the torch release
    #: its environment records (a build of that release's: ``<release>+cpu``).
    standard: str | None = None
    #: Keys of the environment recorded instead of this machine's (another host's CPU model).
    environment: Mapping[str, Any] = field(default_factory=dict)


@functools.cache
def _environment() -> dict[str, Any]:
    return collect_environment(DeviceInfo("cpu", 1, "x86_64"))


def _environment_of(release: str | None) -> dict[str, Any]:
    """This machine's environment; with ``release``, as a build of that torch release records
    it (the kit certifies one release per standard; only one is installed here)."""
    environment = _environment()
    if release is None:
        return environment
    return {**environment, "torch": {**environment["torch"], "version": f"{release}+cpu"}}


def _record(test_id: str, outcome: Outcome | None) -> TestRecord:
    if outcome is None:
        return TestRecord(test_id, Status.PASS, 0.25)
    return TestRecord(test_id, outcome.status, 0.5, outcome.message, dict(outcome.details))


def build_run_report(run: Run) -> dict[str, Any]:
    standard = load_standard(run.standard)
    vendor = dataclasses.replace(
        load_vendor("cpu"), id=run.vendor, display_name=f"{run.vendor.title()} Accelerators"
    )
    if run.docs_url is not None:
        vendor = dataclasses.replace(vendor, docs_url=run.docs_url)
    tiers = list(tier_names())
    test_ids = [
        t
        for tier in tiers
        for t in standard.test_ids(tier)
        if not run.select or matches_any(t, run.select)
    ]
    records = [_record(t, run.outcomes.get(t)) for t in test_ids]
    ran_tiers = [tier for tier in tiers if any(t.startswith(f"{tier}/") for t in test_ids)]
    report = build_report(
        records=records,
        standard=standard,
        vendor=vendor,
        skips=SkipManifest(entries=()),
        environment={**_environment_of(standard.torch_release if run.standard else None),
                     **run.environment},
        run={
            "tiers": ran_tiers,
            "select": list(run.select),
            "timeout_s": 60.0,
            "started_at": (run.finished - dt.timedelta(minutes=30)).isoformat(),
            "finished_at": run.finished.isoformat(),
            "workers": 1,
            "complete": not run.select,
        },
        clock=RunDate(run.finished.date()),
    )
    if run.canary:
        report["run"]["canary"] = True
    # The kit version the run names (an unreleased kit, so any version is honest).
    report["kit"]["version"] = run.kit_version
    return report


@dataclass
class Repository:
    """A shared repository under ``root``: submissions, the keyring, vendors' private keys."""

    root: Path
    keys: dict[str, Path] = field(default_factory=dict)

    @property
    def keyring_dir(self) -> Path:
        return self.root / "keyring"

    def key_for(self, vendor: str) -> Path:
        if vendor not in self.keys:
            key = generate_private_key()
            path = self.root.parent / "private-keys" / f"{vendor}.pem"
            write_private_key(path, private_key_pem(key, None), force=False)
            add_public_key(self.keyring_dir, vendor, key.public_key())
            self.keys[vendor] = path
        return self.keys[vendor]

    def submit(self, run: Run) -> SubmissionKey:
        """Build, sign and file ``run``; its key (the submission's place)."""
        report = build_run_report(run)
        staging = self.root.parent / "staging" / f"{run.vendor}-{len(list(self.root.rglob('*')))}"
        write_report_files(report, staging)
        sign_output_dir(staging, self.key_for(run.vendor), None)
        envelope = decode_envelope(loads_strict((staging / ENVELOPE_NAME).read_bytes()))
        payload_digest = sha256_bytes(envelope.payload)
        key = SubmissionKey(
            torch_release_of(report["standard"]["torch_release"]),
            run.vendor,
            run.kit_version,
            run_id_for(report["run"]["finished_at"], payload_digest),
        )
        shutil.copytree(staging, key.directory(self.root))
        shutil.rmtree(staging)
        return key


def audit_submission(repo: Repository, key: SubmissionKey, now: dt.datetime) -> SubmissionAudit:
    """The test's stand-in for the repository audit: ``verify_envelope`` as one check."""
    title = "envelope verifies (signature, vendor, files, content)"
    try:
        verified = verify_envelope(key.directory(repo.root), keyring_dir=repo.keyring_dir, now=now)
    except VerificationError as error:
        return SubmissionAudit(key, (CheckResult(1, title, False, str(error)),))
    if verified.vendor != key.vendor:
        check = CheckResult(1, title, False, f"signed by {verified.vendor}, filed as {key.vendor}")
        return SubmissionAudit(key, (check,))
    return SubmissionAudit(key, (CheckResult(1, title, True),), verified.content)


def audit(repo: Repository, now: dt.datetime = NOW) -> RepositoryAudit:
    keys = find_submissions(repo.root)
    submissions = tuple(audit_submission(repo, key, now) for key in keys)
    keyring = CheckResult(0, "keyring readable", repo.keyring_dir.is_dir())
    return RepositoryAudit(checks=(keyring,), submissions=submissions)


def tamper(repo: Repository, key: SubmissionKey) -> None:
    """Change one record's status in a filed report.json, as a vendor editing results would."""
    path = key.directory(repo.root) / "report.json"
    report = json.loads(path.read_text(encoding="utf-8"))
    for record in report["records"]:
        if record["status"] != "PASS":
            record["status"] = "PASS"
            record["message"] = ""
            break
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def hours_before(now: dt.datetime, hours: float) -> dt.datetime:
    return now - dt.timedelta(hours=hours)


def failing_models(*ids: str) -> dict[str, Outcome]:
    return {test_id: numeric_failure() for test_id in ids}


def ids_of(tier: str) -> Sequence[str]:
    return load_standard().test_ids(tier)
