"""``ckit verify SUBMISSION_DIR --repo-config DIR`` reaches ``ckit audit``'s decision, by the same
checks under the same names, for every kind of submission under one repository configuration.

The repository is `ckit repo init --pilot`'s (the README's: narrowed runs accepted, the rest of
the standard's acceptance policy as it is), its keyring holding acme's and bolt's keys signed by
its root, its released kits this kit alone (the kit's own list names none: a verify without the
repository's list would say "not a released kit"). The submissions are real narrowed reports
built by the kit over the standard's locked ids and signed (tests/portal/submission_helpers.py):
no run. One audit of the whole repository, then one verify per submission.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import re
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "portal"))

from submission_helpers import NOW, SMALL_SELECT, Run, build_run_report  # noqa: E402

from kit.cli import main  # noqa: E402
from kit.cli.cmd_audit import SKIPPED_MARK  # noqa: E402
from kit.errors import ExitCode  # noqa: E402
from kit.formats.files import write_report_files  # noqa: E402
from kit.hashing import sha256_bytes  # noqa: E402
from kit.repository.layout import SubmissionKey, run_id_for, torch_release_of  # noqa: E402
from kit.repository.submission_checks import INTEGRITY, POLICY  # noqa: E402
from kit.rundir import ENVELOPE_NAME  # noqa: E402
from kit.signing.dsse import decode_envelope  # noqa: E402
from kit.signing.keys import generate_private_key, private_key_pem, public_key_pem  # noqa: E402
from kit.signing.sign import sign_output_dir  # noqa: E402
from kit.strict_json import loads_strict  # noqa: E402

VENDORS = ("acme", "bolt")


@dataclass(frozen=True)
class Repository:
    root: Path
    keys: Mapping[str, Path]

    @property
    def config(self) -> Path:
        return self.root / "ckit"


def _keys(base: Path) -> dict[str, Path]:
    keys = {}
    for vendor in VENDORS:
        key = generate_private_key()
        keys[vendor] = base / "keys" / f"{vendor}.pem"
        keys[vendor].parent.mkdir(parents=True, exist_ok=True)
        keys[vendor].write_bytes(private_key_pem(key, None))
        keys[vendor].with_suffix(".pub.pem").write_bytes(public_key_pem(key.public_key()))
    return keys


def _initialised(base: Path) -> Repository:
    root, root_key = base / "results", base / "offline" / "root.pem"
    assert main(["repo", "init", str(root), "--root-key", str(root_key), "--kit-repository",
                 "example/ckit", "--pilot", "--required-vendor", "acme"]) == ExitCode.OK
    keys = _keys(base)
    keyring = str(root / "keyring")
    for vendor, key in keys.items():
        assert main(["keys", "add", "--keyring", keyring, "--vendor", vendor, "--public-key",
                     str(key.with_suffix(".pub.pem")), "--not-before", "2020-01-01"]) == 0
    assert main(["keys", "sign-keyring", "--keyring", keyring, "--root-key", str(root_key)]) == 0
    return Repository(root, keys)


def _file(repo: Repository, report: dict[str, Any], signer: str,
          after_signing: Callable[[Path], None] = lambda _: None) -> SubmissionKey:
    """``report`` written, signed by ``signer``'s key, filed under its vendor's path."""
    staging = repo.root.parent / "staging"
    write_report_files(report, staging)
    sign_output_dir(staging, repo.keys[signer], None)
    envelope = decode_envelope(loads_strict((staging / ENVELOPE_NAME).read_bytes()))
    key = SubmissionKey(torch_release_of(report["standard"]["torch_release"]),
                        report["vendor"]["id"], report["kit"]["version"],
                        run_id_for(report["run"]["finished_at"], sha256_bytes(envelope.payload)))
    after_signing(staging)
    shutil.move(staging, key.directory(repo.root))
    return key


def _finished(report: dict[str, Any], hours_before_now: float) -> dict[str, Any]:
    """The same report, finished at another time: another signed payload, no replay."""
    moved = copy.deepcopy(report)
    finished = NOW - dt.timedelta(hours=hours_before_now)
    moved["run"]["started_at"] = (finished - dt.timedelta(minutes=30)).isoformat()
    moved["run"]["finished_at"] = finished.isoformat()
    return moved


def _patched_kit(report: dict[str, Any]) -> dict[str, Any]:
    """Judged by a kit with one edited byte: another digest, in no released-kit list."""
    report["kit"]["digest"] = sha256_bytes(b"a loosened tolerance")
    return report


def _record_passed_after_signing(directory: Path) -> None:
    path = directory / "report.json"
    report = json.loads(path.read_text(encoding="utf-8"))
    report["records"][0]["duration_s"] += 1.0
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def filed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repository, dict[str, SubmissionKey]]:
    base = tmp_path_factory.mktemp("verify-agrees")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(base / "config"))
        patch.delenv("CKIT_SIGNING_KEY", raising=False)
        repo = _initialised(base)
    narrowed = build_run_report(Run("acme", NOW - dt.timedelta(hours=1), select=SMALL_SELECT))
    canary = _finished(narrowed, 2)
    canary["run"]["canary"] = True
    keys = {
        "narrowed_run_the_pilot_accepts": _file(repo, narrowed, "acme"),
        "canary_run": _file(repo, canary, "acme"),
        "run_of_a_locally_patched_kit": _file(repo, _patched_kit(_finished(narrowed, 3)), "acme"),
        "report_edited_after_signing": _file(repo, _finished(narrowed, 4), "acme",
                                             _record_passed_after_signing),
        "signed_with_another_vendors_key": _file(repo, _finished(narrowed, 5), "bolt"),
    }
    return repo, keys


#: The moment a pending submission enters the repository: each command's own "now".
_MOMENT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def _sections(out: str) -> dict[str, list[str]]:
    """Each submission's checklist lines, by its key, from an audit's output."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in out.splitlines():
        if line.startswith("submissions/"):
            current = sections.setdefault(line, [])
        elif line.startswith("  ") and current is not None:
            current.append(_MOMENT.sub("<now>", line))
        else:
            current = None
    return sections


#: What the audit decides of each (None: passes), as the first failing check's number.
EXPECTED_FAILURE = {
    "narrowed_run_the_pilot_accepts": None,
    "canary_run": None,
    "run_of_a_locally_patched_kit": POLICY,
    "report_edited_after_signing": INTEGRITY,
    "signed_with_another_vendors_key": INTEGRITY,
}


def test_verify_reaches_the_audits_decision_by_the_same_checks(
    filed: tuple[Repository, dict[str, SubmissionKey]], capsys: pytest.CaptureFixture[str]
) -> None:
    repo, keys = filed
    config = ["--repo-config", str(repo.config)]
    audited = main(["audit", str(repo.root), *config])
    audit = _sections(capsys.readouterr().out)
    assert audited == ExitCode.VERIFICATION_FAILED and len(audit) == len(keys)
    for name, key in keys.items():
        code = main(["verify", str(key.directory(repo.root)), *config])
        out = capsys.readouterr().out
        assert _sections(out) == {str(key): audit[str(key)]}, name
        failing = [line for line in audit[str(key)] if " ✗ " in line]
        expected = EXPECTED_FAILURE[name]
        assert code == (ExitCode.OK if expected is None else ExitCode.VERIFICATION_FAILED), name
        assert (failing[0].split(".")[0].strip() if failing else None) == (
            None if expected is None else str(expected)), (name, failing)
        assert out.splitlines()[-1].startswith("PASSED: " if expected is None else "FAILED: ")


def test_a_check_not_run_prints_as_skipped_never_failed(
    filed: tuple[Repository, dict[str, SubmissionKey]], capsys: pytest.CaptureFixture[str]
) -> None:
    """The edited report fails check 2 alone: the checks that need it say they did not run."""
    repo, keys = filed
    key = keys["report_edited_after_signing"]
    main(["verify", str(key.directory(repo.root)), "--repo-config", str(repo.config)])
    lines = _sections(capsys.readouterr().out)[str(key)]
    assert [line.split(".")[0].strip() for line in lines if " ✗ " in line] == [str(INTEGRITY)]
    skipped = [line for line in lines if f" {SKIPPED_MARK} " in line]
    assert len(skipped) >= 6
    assert all("not checked: the envelope did not verify" in line for line in skipped)


def test_verify_options_the_audit_decides_are_refused_for_a_filed_submission(
    filed: tuple[Repository, dict[str, SubmissionKey]], capsys: pytest.CaptureFixture[str]
) -> None:
    repo, keys = filed
    key = keys["narrowed_run_the_pilot_accepts"]
    code = main(["verify", str(key.directory(repo.root)), "--repo-config", str(repo.config),
                 "--vendor", "bolt"])
    assert code == ExitCode.INPUT_ERROR
    assert capsys.readouterr().err == (
        f"ckit: error: --vendor does not apply to {key} under --repo-config: a filed submission "
        "is audited as `ckit audit` audits it (its repository's keyring, the vendor of its "
        "path, the configuration's policy)\n"
    )
