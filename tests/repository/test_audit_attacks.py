"""Attacks on the shared repository: each one fails ``ckit audit`` with its one clear line.

Every attack starts from a copy of the real, passing repository (two real signed runs submitted
with ``ckit submit``) and changes what an attacker with write access to a pull request could.
Attacks that re-sign do so validly with the vendor's own key and file the result where its new
payload belongs, so only the check the attack targets can catch it.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from repository_helpers import SharedRepo

from kit.cli import main
from kit.errors import ExitCode
from kit.formats.files import render_derived
from kit.hashing import sha256_bytes, sha256_file
from kit.report.model import Report
from kit.repository.audit import REPOSITORY_TITLES, audit_repository
from kit.repository.interface import CheckResult, RepositoryAudit
from kit.repository.layout import SubmissionKey, submission_key_for
from kit.repository.submission_checks import TITLES
from kit.rundir import ENVELOPE_NAME, MAX_FILE_BYTES
from kit.signing.dsse import decode_envelope
from kit.signing.keys import keyid_of, load_private_key
from kit.signing.sign import sign_output_dir
from kit.standard import load_standard
from kit.strict_json import loads_strict


@dataclass(frozen=True)
class Expected:
    """The line the attack must get: check ``number`` of submission ``key`` (``None``: of the
    repository) fails with a reason starting ``why``."""

    key: SubmissionKey | None
    number: int
    why: str
    #: Whether this check is the one that catches the attack: every earlier check of that
    #: submission passes, and every other submission still passes.
    first: bool = True


@dataclass(frozen=True)
class Repo:
    root: Path
    shared: SharedRepo
    keys: dict[str, SubmissionKey]

    def directory(self, vendor: str) -> Path:
        return self.keys[vendor].directory(self.root)


def _payload_digest(directory: Path) -> str:
    envelope = decode_envelope(loads_strict((directory / ENVELOPE_NAME).read_bytes()))
    return sha256_bytes(envelope.payload)


def _resign_and_refile(repo: Repo, vendor: str, change: Callable[[dict[str, Any]], None]
                       ) -> SubmissionKey:
    """Change report.json (its derived files rendered again, so only the attacked claim is
    wrong), sign it validly with the vendor's key, file it where it belongs."""
    directory = repo.directory(vendor)
    report = json.loads((directory / "report.json").read_text())
    change(report)
    # As the kit writes it (canonical JSON and a newline): verify's step 8 takes no other text.
    text = json.dumps(report, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    report_json = (text + "\n").encode("utf-8")
    (directory / "report.json").write_bytes(report_json)
    for name, data in render_derived(report_json).items():
        (directory / name).write_bytes(data)
    sign_output_dir(directory, repo.shared.keys[vendor], None)
    key = submission_key_for(Report.from_json(report), _payload_digest(directory))
    key.directory(repo.root).parent.mkdir(parents=True, exist_ok=True)
    directory.rename(key.directory(repo.root))
    return key


def tampered_report_file(repo: Repo) -> Expected:
    path = repo.directory("cpu") / "results.csv"
    signed = sha256_file(path)
    path.write_bytes(path.read_bytes().replace(b"PASS", b"FAIL", 1))
    return Expected(repo.keys["cpu"], 2, f"step 7: results.csv was modified after signing "
                    f"(sha256 {sha256_file(path)[:16]}, signed {signed[:16]})")


def key_of_another_vendor(repo: Repo) -> Expected:
    sign_output_dir(repo.directory("cpu"), repo.shared.keys["simnpu"], None)
    keyid = keyid_of(load_private_key(repo.shared.keys["simnpu"], None).public_key())
    return Expected(repo.keys["cpu"], 2, f"step 6: key {keyid[:16]} of vendor simnpu signed a "
                    "report claiming vendor 'cpu'")


def replayed_envelope_under_another_vendor(repo: Repo) -> Expected:
    cpu = repo.keys["cpu"]
    replay = SubmissionKey(cpu.torch_release, "simnpu", cpu.kit_version, cpu.run_id)
    shutil.copytree(repo.directory("cpu"), replay.directory(repo.root))
    return Expected(replay, 7, f"the same signed payload is also submitted as {cpu}", first=False)


def grade_not_matching_its_records(repo: Repo) -> Expected:
    report = json.loads((repo.directory("cpu") / "report.json").read_text())
    actual = report["grade"]["name"]
    assert actual != "conformant"

    def claim_conformant(document: dict[str, Any]) -> None:
        document["grade"]["name"] = "conformant"

    key = _resign_and_refile(repo, "cpu", claim_conformant)
    return Expected(key, 6, f"step 12: report claims grade 'conformant', but its records graded "
                    f"under standard {report['standard']['version']} give {actual!r}")


def summary_claiming_conformant_beside_a_non_conformant_report(repo: Repo) -> Expected:
    """A derived file rewritten and signed again validly: only regenerating it catches it."""
    directory = repo.directory("cpu")
    (directory / "summary.md").write_text("# cpu: conformant\n\nAll tests passed.\n")
    sign_output_dir(directory, repo.shared.keys["cpu"], None)
    key = submission_key_for(Report.from_json(json.loads((directory / "report.json").read_text())),
                             _payload_digest(directory))
    key.directory(repo.root).parent.mkdir(parents=True, exist_ok=True)
    directory.rename(key.directory(repo.root))
    return Expected(key, 11, "step 13: summary.md is not what report.json renders")


def required_test_removed(repo: Repo) -> Expected:
    removed: list[str] = []

    def drop_first_record(document: dict[str, Any]) -> None:
        removed.append(document["records"].pop(0)["id"])

    key = _resign_and_refile(repo, "simnpu", drop_first_record)
    version = load_standard().version
    return Expected(key, 4, f"1 required test(s) of standard {version} have no record (first: "
                    f"{removed[0]}); 1 not even listed as missing")


def expired_skip(repo: Repo) -> Expected:
    entry = {"test": "unit/opinfo/mul/float64/*", "reason": "precision",
             "tracking": "https://example.org/issues/7", "expires": "2026-01-02", "note": ""}

    def add_expired_entry(document: dict[str, Any]) -> None:
        document["skip_manifest"]["entries"].append(entry)

    key = _resign_and_refile(repo, "simnpu", add_expired_entry)
    return Expected(key, 5, "skip manifest entry 'unit/opinfo/mul/float64/*' (precision, "
                    "https://example.org/issues/7) expired on 2026-01-02")


def skip_without_tracking_link(repo: Repo) -> Expected:
    def add_untracked_entry(document: dict[str, Any]) -> None:
        entry = {"test": "unit/opinfo/mul/float64/*", "reason": "precision",
                 "tracking": "see chat", "expires": "2027-04-01", "note": ""}
        document["skip_manifest"]["entries"].append(entry)

    key = _resign_and_refile(repo, "cpu", add_untracked_entry)
    return Expected(key, 5, "skip manifest entry 'unit/opinfo/mul/float64/*' has no tracking link "
                    "(tracking 'see chat')")


def unknown_file(repo: Repo) -> Expected:
    (repo.directory("cpu") / "notes.txt").write_text("trust me\n")
    return Expected(repo.keys["cpu"], 1, "unknown file notes.txt")


def unknown_file_beside_submissions(repo: Repo) -> Expected:
    (repo.root / "submissions" / "2.13" / "README.md").write_text("hi\n")
    return Expected(None, 2, "submissions/2.13/README.md is a file where a vendor id directory "
                    "belongs")


def path_traversal_in_a_name(repo: Repo) -> Expected:
    traversal = repo.root / "submissions" / "2.13" / "..\\..\\keyring"
    shutil.copytree(repo.directory("cpu"), traversal / "0.1.0" / repo.keys["cpu"].run_id)
    return Expected(None, 2, "submissions/2.13/..\\..\\keyring: not a valid vendor id")


def control_characters_in_a_name(repo: Repo) -> Expected:
    odd = repo.root / "submissions" / "2.13" / "cpu\x1b[2K\rok"
    shutil.copytree(repo.directory("cpu"), odd / "0.1.0" / repo.keys["cpu"].run_id)
    return Expected(None, 2, "submissions/2.13/cpu\\x1b[2K\\rok: not a valid vendor id")


def oversized_file(repo: Repo) -> Expected:
    with open(repo.directory("cpu") / "golden-manifest.json", "wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk spent
    return Expected(repo.keys["cpu"], 1, f"golden-manifest.json is {MAX_FILE_BYTES + 1} bytes, "
                    f"over the limit of {MAX_FILE_BYTES}")


def symlink_as_a_report_file(repo: Repo) -> Expected:
    path = repo.directory("simnpu") / "summary.md"
    path.unlink()
    os.symlink(repo.shared.runs["simnpu"] / "summary.md", path)
    return Expected(repo.keys["simnpu"], 1, "summary.md is a symlink")


def symlinked_keyring_key(repo: Repo) -> Expected:
    stolen = repo.shared.base / "stolen.pub.pem"
    vendor_keys = repo.root / "keyring" / "cpu"
    (vendor_keys / "stolen.pub.pem").symlink_to(stolen)
    # Every submission's check 2 fails too: the verifier refuses the keyring as well.
    return Expected(None, 1, "keyring/cpu/stolen.pub.pem is a symlink", first=False)


def directory_inside_a_submission(repo: Repo) -> Expected:
    (repo.directory("cpu") / "extra").mkdir()
    return Expected(repo.keys["cpu"], 1, "extra is a directory (a submission holds plain files "
                    "only)")


def empty_release_directory(repo: Repo) -> Expected:
    (repo.root / "submissions" / "2.14").mkdir()
    return Expected(None, 2, "submissions/2.14 is an empty directory (too shallow)")


def symlinked_directory(repo: Repo) -> Expected:
    os.symlink(repo.root / "submissions" / "2.13" / "cpu", repo.root / "submissions" / "2.13"
               / "cpu-mirror")
    return Expected(None, 2, "submissions/2.13/cpu-mirror is a symlink")


ATTACKS = [
    tampered_report_file,
    key_of_another_vendor,
    replayed_envelope_under_another_vendor,
    grade_not_matching_its_records,
    summary_claiming_conformant_beside_a_non_conformant_report,
    required_test_removed,
    expired_skip,
    skip_without_tracking_link,
    unknown_file,
    unknown_file_beside_submissions,
    path_traversal_in_a_name,
    control_characters_in_a_name,
    oversized_file,
    symlink_as_a_report_file,
    symlinked_directory,
    symlinked_keyring_key,
    directory_inside_a_submission,
    empty_release_directory,
]


def _copy(shared: SharedRepo, root: Path) -> Repo:
    shutil.copytree(shared.checkout, root, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    keys = {a.key.vendor: a.key for a in audit_repository(root).submissions}
    return Repo(root, shared, keys)


def _checks(audit: RepositoryAudit, key: SubmissionKey | None) -> tuple[CheckResult, ...]:
    return audit.checks if key is None else audit.by_key()[key].checks


def _printed_section(out: str, key: SubmissionKey | None) -> list[str]:
    heading = "repository" if key is None else str(key)
    lines = out.splitlines()
    start = lines.index(heading) + 1
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("  ")), len(lines))
    return lines[start:end]


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda attack: attack.__name__)
def test_attack_fails_the_audit_with_its_line(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    attack: Callable[[Repo], Expected],
) -> None:
    repo = _copy(shared, tmp_path / "repo")
    expected = attack(repo)
    audit = audit_repository(repo.root)
    assert not audit.passed
    checks = _checks(audit, expected.key)
    failed = [c for c in checks if c.number == expected.number and not c.passed]
    assert failed, [c.to_json() for c in checks]
    assert failed[0].why.startswith(expected.why), failed[0].why
    if expected.first and expected.key is not None:
        assert all(c.passed for c in checks if c.number < expected.number)
    untouched = [a for a in audit.submissions if a.key in repo.keys.values()
                 and a.key != expected.key]
    if expected.first:  # the attack costs no other submission its pass
        assert untouched and all(a.passed for a in untouched)

    assert main(["audit", str(repo.root), *shared.audit_args]) == ExitCode.VERIFICATION_FAILED
    out = capsys.readouterr().out
    title = (REPOSITORY_TITLES if expected.key is None else TITLES)[expected.number]
    line = f"  {expected.number}. ✗ {title}: {expected.why}"
    assert [x for x in _printed_section(out, expected.key) if x.startswith(line)], out
    assert out.splitlines()[-1].startswith("FAILED: ")


def test_audit_json_names_the_failing_check(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _copy(shared, tmp_path / "repo")
    expected = unknown_file(repo)
    code = main(["audit", str(repo.root), "--json", *shared.audit_args])
    assert code == ExitCode.VERIFICATION_FAILED
    document = json.loads(capsys.readouterr().out)
    assert document["passed"] is False
    (entry,) = [s for s in document["submissions"] if s["submission"] == str(expected.key)]
    assert entry["checks"][0] == {"number": 1, "title": TITLES[1], "passed": False,
                                  "why": expected.why, "skipped": False}
