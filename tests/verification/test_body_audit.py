"""The audit of ``body``-format submissions: the content checked once per signed payload, the
verdict recorded in the auditor's cache and read back; integrity checked every time."""

from __future__ import annotations

import datetime as dt
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from body_helpers import SignedBody, body_report, signed_body  # noqa: E402

from kit.hashing import sha256_bytes  # noqa: E402
from kit.report.body import encode_body, write_body_files  # noqa: E402
from kit.repository.audit import audit_repository  # noqa: E402
from kit.repository.interface import SubmissionAudit  # noqa: E402
from kit.repository.layout import KEYRING_DIR, SubmissionKey, submission_key_of  # noqa: E402
from kit.repository.submission_checks import (  # noqa: E402
    GRADE,
    INTEGRITY,
    LAYOUT,
    PATH,
    REQUIRED,
    SKIPS,
)
from kit.rundir import RECORDS_JSONL  # noqa: E402
from kit.signing.dsse import decode_envelope  # noqa: E402
from kit.signing.sign import sign_output_dir  # noqa: E402
from kit.strict_json import loads_strict  # noqa: E402
from kit.verification.content_cache import ContentCache  # noqa: E402

pytestmark = pytest.mark.usefixtures("private_config")


def file_body(signed: SignedBody, repo: Path) -> SubmissionKey:
    """File the signed body where ``ckit submit`` files it; the keyring beside it."""
    envelope = decode_envelope(loads_strict(signed.envelope.read_bytes()))
    head = loads_strict((signed.run_dir / "report.head.json").read_bytes())
    key = submission_key_of(head["standard"]["torch_release"], head["vendor"]["id"],
                            head["kit"]["version"],
                            dt.datetime.fromisoformat(head["run"]["finished_at"]),
                            sha256_bytes(envelope.payload))
    shutil.copytree(signed.run_dir, key.directory(repo))
    if not (repo / KEYRING_DIR).exists():
        shutil.copytree(signed.keyring, repo / KEYRING_DIR)
    return key


def audited(repo: Path, cache: ContentCache | None) -> SubmissionAudit:
    (submission,) = audit_repository(repo, content_cache=cache).submissions
    return submission


def check(submission: SubmissionAudit, number: int) -> tuple[bool, str]:
    found = next(c for c in submission.checks if c.number == number)
    return found.passed, found.why


def test_body_submission_passes_the_audit_and_its_verdict_is_read_back(tmp_path: Path) -> None:
    signed = signed_body(tmp_path / "vendor")
    repo = tmp_path / "repo"
    file_body(signed, repo)
    cache = ContentCache(tmp_path / "auditor" / "verdicts")
    first = audited(repo, cache)
    assert first.passed, [c for c in first.checks if not c.passed]
    assert len(list(cache.directory.rglob("*.json"))) == 1  # checked and recorded
    again = audited(repo, cache)
    assert again.passed and again.report is None  # the recorded verdict: no decoding
    assert audited(repo, None).report is not None  # no cache (gate, portal): the typed report
    assert [c.number for c in again.checks] == list(range(1, 12))


def test_body_swapped_after_the_verdict_was_recorded_is_refused(tmp_path: Path) -> None:
    signed = signed_body(tmp_path / "vendor")
    repo = tmp_path / "repo"
    key = file_body(signed, repo)
    cache = ContentCache(tmp_path / "auditor" / "verdicts")
    assert audited(repo, cache).passed
    swapped = encode_body(body_report(records=[]))[RECORDS_JSONL]
    (key.directory(repo) / RECORDS_JSONL).write_bytes(swapped)
    submission = audited(repo, cache)
    passed, why = check(submission, INTEGRITY)
    assert not passed and why.startswith("step 7: records.jsonl was modified after signing")


def test_body_claiming_a_better_grade_fails_the_grade_check_twice(tmp_path: Path) -> None:
    signed = signed_body(tmp_path / "vendor")
    liar = tmp_path / "liar"
    write_body_files(dict(body_report(), grade={"name": "conformant", "reasons": []}), liar)
    sign_output_dir(liar, signed.key_path, None)
    repo = tmp_path / "repo"
    file_body(SignedBody(liar, signed.keyring, signed.key_path), repo)
    cache = ContentCache(tmp_path / "auditor" / "verdicts")
    for _ in range(2):  # checked, then read back: refused both times
        submission = audited(repo, cache)
        passed, why = check(submission, GRADE)
        assert not passed and why.startswith("step 12: report claims grade 'conformant'")
        assert check(submission, INTEGRITY)[0] and check(submission, PATH)[0]


def test_body_submission_holding_an_unsigned_report_json_fails_its_layout(tmp_path: Path
                                                                          ) -> None:
    signed = signed_body(tmp_path / "vendor")
    repo = tmp_path / "repo"
    key = file_body(signed, repo)
    (key.directory(repo) / "report.json").write_text("{}\n")
    passed, why = check(audited(repo, None), LAYOUT)
    assert not passed and "unknown file report.json" in why


def test_verdict_recorded_by_ckit_verify_is_taken_again_by_the_audit(tmp_path: Path) -> None:
    """``ckit verify`` records no required-tests or skip-policy check: the audit, sharing the
    cache, checks the body itself rather than reading those as not checked."""
    signed = signed_body(tmp_path / "vendor")
    cache = ContentCache(tmp_path / "auditor" / "verdicts")
    signed.verify(cache=cache)
    repo = tmp_path / "repo"
    file_body(signed, repo)
    first = audited(repo, cache)
    assert first.passed, [c for c in first.checks if not c.passed]
    assert audited(repo, cache).passed


def test_body_claiming_a_better_grade_still_has_its_required_tests_checked(tmp_path: Path
                                                                          ) -> None:
    signed = signed_body(tmp_path / "vendor")
    liar = tmp_path / "liar"
    write_body_files(dict(body_report(), grade={"name": "conformant", "reasons": []}), liar)
    sign_output_dir(liar, signed.key_path, None)
    repo = tmp_path / "repo"
    file_body(SignedBody(liar, signed.keyring, signed.key_path), repo)
    cache = ContentCache(tmp_path / "auditor" / "verdicts")
    for _ in range(2):
        submission = audited(repo, cache)
        assert check(submission, REQUIRED)[0] and check(submission, SKIPS)[0]
