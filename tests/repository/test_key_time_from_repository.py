"""Audit check 9 judges a signing key at the time the submission entered the repository (the
commit that added it), never before the signed finish: the finish time is the signer's word.

Real git clones of the shared repository's origin; the retired key's holder signs validly.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from repository_helpers import TEST_AUTHOR, SharedRepo, git

from kit.cli import main
from kit.errors import ExitCode
from kit.formats.files import render_derived
from kit.hashing import sha256_bytes
from kit.report.model import Report
from kit.repository.layout import SubmissionKey, required_files, submission_key_for
from kit.repository.submission_checks import KEY
from kit.rundir import ENVELOPE_NAME
from kit.signing.dsse import decode_envelope
from kit.signing.keys import keyid_of, load_private_key
from kit.signing.sign import sign_output_dir
from kit.signing.strict_json import loads_strict


def _clone(shared: SharedRepo, tmp_path: Path) -> tuple[Path, str]:
    clone = tmp_path / "clone"
    git(["clone", "--quiet", str(shared.origin), str(clone)], tmp_path)
    return clone, git(["rev-parse", "HEAD"], clone).strip()


def _retire_cpu_key(shared: SharedRepo, clone: Path, at: dt.datetime) -> str:
    """The maintainers retire cpu's key as of ``at`` and the roots sign the keyring; committed."""
    keyid = keyid_of(load_private_key(shared.keys["cpu"], None).public_key())
    manifest = clone / "keyring" / "keyring.json"
    document = json.loads(manifest.read_text())
    for entry in document["keys"]:
        if entry["keyid"] == keyid:
            entry.update(status="retired", changed_at=at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                         reason="rotated")
    manifest.write_text(json.dumps(document, indent=2) + "\n")
    (clone / "keyring" / "keyring.json.sig").unlink()
    assert main(["keys", "sign-keyring", "--keyring", str(clone / "keyring"),
                 "--root-key", str(shared.root_key)]) == ExitCode.OK
    _commit(clone, "Retire cpu's key")
    return keyid


def _commit(clone: Path, message: str, at: dt.datetime | None = None) -> None:
    """Commit everything, at ``at`` (the history's time) or now."""
    git(["add", "-A"], clone)
    env = {**os.environ, **({"GIT_COMMITTER_DATE": at.isoformat()} if at else {})}
    subprocess.run(["git", *TEST_AUTHOR, "commit", "--quiet", "-m", message], cwd=clone,
                   env=env, check=True, capture_output=True)


def _signed_run(shared: SharedRepo, tmp_path: Path, finished: dt.datetime) -> Path:
    """cpu's real run, its times set to end at ``finished``, signed with cpu's key."""
    run_dir = tmp_path / "run"
    shutil.copytree(shared.runs["cpu"], run_dir)
    report = json.loads((run_dir / "report.json").read_text())
    report["run"]["started_at"] = (finished - dt.timedelta(minutes=5)).isoformat()
    report["run"]["finished_at"] = finished.isoformat()
    report_json = (json.dumps(report, indent=2) + "\n").encode("utf-8")
    (run_dir / "report.json").write_bytes(report_json)
    for name, data in render_derived(report_json).items():
        (run_dir / name).write_bytes(data)
    sign_output_dir(run_dir, shared.keys["cpu"], None)
    return run_dir


def _file(run_dir: Path, clone: Path) -> SubmissionKey:
    report = Report.from_json(json.loads((run_dir / "report.json").read_text()))
    envelope = decode_envelope(loads_strict((run_dir / ENVELOPE_NAME).read_bytes()))
    key = submission_key_for(report, sha256_bytes(envelope.payload))
    key.directory(clone).mkdir(parents=True)
    for name in required_files():
        shutil.copy(run_dir / name, key.directory(clone) / name)
    return key


def _key_check(shared: SharedRepo, clone: Path, since: str,
               capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    capsys.readouterr()  # what signing the keyring printed
    main(["audit", str(clone), "--changed-since", since, *shared.audit_args, "--json"])
    (submission,) = json.loads(capsys.readouterr().out)["submissions"]
    return next(c for c in submission["checks"] if c["number"] == KEY)


def test_retired_key_backdating_finished_at_is_refused(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    clone, before = _clone(shared, tmp_path)
    keyid = _retire_cpu_key(shared, clone, now - dt.timedelta(minutes=10))
    # Signed after the retirement, dated before it.
    run_dir = _signed_run(shared, tmp_path, now - dt.timedelta(minutes=20))
    _file(run_dir, clone)
    _commit(clone, "Submit cpu")
    check = _key_check(shared, clone, before, capsys)
    assert not check["passed"]
    assert f"after key {keyid[:16]} of vendor cpu was retired" in str(check["why"])


def test_submission_committed_before_its_key_retired_still_passes(
    shared: SharedRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    clone, before = _clone(shared, tmp_path)
    run_dir = _signed_run(shared, tmp_path, now - dt.timedelta(minutes=20))
    _file(run_dir, clone)
    _commit(clone, "Submit cpu", at=now - dt.timedelta(minutes=15))
    _retire_cpu_key(shared, clone, now - dt.timedelta(minutes=10))
    check = _key_check(shared, clone, before, capsys)
    assert check["passed"], check
    assert str(check["why"]).startswith("1 key(s) active for cpu when it entered the repository")
