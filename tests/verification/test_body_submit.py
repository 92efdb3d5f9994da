"""``ckit submit`` of a ``body``-format run: its content is checked once, by the pre-check's
audit (steps 8-12 and the audit's own checks), not a second time by submit's own verify; without
a pre-check, submit's verify checks it in full."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from body_helpers import SignedBody, body_report, signed_body  # noqa: E402

import kit.verification.verify as verify  # noqa: E402
import kit.verification.verify_body as verify_body  # noqa: E402
from kit.errors import VerificationError  # noqa: E402
from kit.report.body import write_body_files  # noqa: E402
from kit.repository.audit import audit_repository  # noqa: E402
from kit.repository.interface import SubmissionAudit  # noqa: E402
from kit.repository.layout import KEYRING_DIR, SubmissionKey  # noqa: E402
from kit.repository.submit import submit_run  # noqa: E402

pytestmark = pytest.mark.usefixtures("private_config")

AUTHOR = ["-c", "user.name=Test Maintainer", "-c", "user.email=maintainer@example.org"]


def git(args: list[str], cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def seed_repo(root: Path, keyring: Path) -> Path:
    """A shared repository holding the vendor's keyring."""
    seed = root / "seed"
    git(["init", "--quiet", "-b", "main", str(seed)], root)
    shutil.copytree(keyring, seed / KEYRING_DIR)
    git(["add", "."], seed)
    git([*AUTHOR, "commit", "--quiet", "-m", "The shared repository"], seed)
    return seed


def precheck(clone: Path, key: SubmissionKey) -> SubmissionAudit:
    (audited,) = audit_repository(clone, only=frozenset({key})).submissions
    return audited


@pytest.fixture
def content_checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each run of a body's content checks (steps 8-12), by whichever path ran them."""
    calls: list[str] = []
    for module in (verify, verify_body):
        real = module.check_body_content

        def counted(*args: Any, _real: Any = real, _name: str = module.__name__,
                    **kwargs: Any) -> Any:
            calls.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, "check_body_content", counted)
    return calls


def test_a_body_is_content_checked_once_at_submit(tmp_path: Path,
                                                   content_checks: list[str]) -> None:
    signed = signed_body(tmp_path / "vendor")
    submission = submit_run(signed.run_dir, str(seed_repo(tmp_path, signed.keyring)),
                            precheck=precheck)
    assert content_checks == ["kit.verification.verify_body"]  # the audit's, with its checks
    assert submission.clone is not None
    message = subprocess.run(["git", "log", "-1", "--format=%B"], cwd=submission.clone,
                             check=True, capture_output=True, text=True).stdout
    grade = body_report()["grade"]["name"]
    assert f"grade: {grade}\n" in message and "signed by: " in message


def _liar(signed: SignedBody, root: Path) -> Path:
    """The vendor's own signature over a body claiming a better grade than its records earn."""
    liar = root / "liar"
    write_body_files(dict(body_report(), grade={"name": "conformant", "reasons": []}), liar)
    SignedBody(liar, signed.keyring, signed.key_path).sign()
    return liar


def test_a_body_claiming_a_better_grade_is_refused_by_the_precheck_alone(
        tmp_path: Path, content_checks: list[str]) -> None:
    signed = signed_body(tmp_path / "vendor")
    repo = str(seed_repo(tmp_path, signed.keyring))
    with pytest.raises(VerificationError, match=r"not submitted: the audit would refuse it at "
                                                r"check 6 \(grade\b"):
        submit_run(_liar(signed, tmp_path), repo, precheck=precheck)
    assert content_checks == ["kit.verification.verify_body"]


def test_without_a_precheck_submit_checks_the_content_itself(
        tmp_path: Path, content_checks: list[str]) -> None:
    signed = signed_body(tmp_path / "vendor")
    repo = str(seed_repo(tmp_path, signed.keyring))
    with pytest.raises(VerificationError, match=r"not submitted: step 12: "):
        submit_run(_liar(signed, tmp_path), repo)
    assert content_checks == ["kit.verification.verify"]
