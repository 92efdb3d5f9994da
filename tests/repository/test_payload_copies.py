"""One real signed submission copied under many run ids (issue 24's probe made audit and gate
quadratic with it): the payload is verified once, each copy is refused with one line, and the
gate counts none of them. ``bench/audit_scale.py`` times 10,000; a few hundred show the
behaviour here."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from repository_helpers import TEST_AUTHOR, SharedRepo, git

from kit.cli import main
from kit.errors import ExitCode
from kit.repository.layout import SubmissionKey
from kit.repository.submission_checks import INTEGRITY, REPLAY

COPIES = 300


def _copy_key(key: SubmissionKey, index: int) -> SubmissionKey:
    stamp = key.run_id.split("-")[0]
    return SubmissionKey(key.torch_release, key.vendor, key.kit_version, f"{stamp}-{index:012x}")


def _cpu_key(root: Path) -> SubmissionKey:
    (directory,) = (root / "submissions").glob("*/cpu/*/*")
    return SubmissionKey(*directory.relative_to(root / "submissions").parts)


@pytest.fixture
def copied(shared: SharedRepo, tmp_path: Path) -> tuple[Path, SubmissionKey]:
    """A clone holding both real submissions and ``COPIES`` copies of cpu's, committed."""
    root = tmp_path / "repo"
    shutil.copytree(shared.checkout, root, symlinks=True)
    real = _cpu_key(root)
    for index in range(1, COPIES + 1):
        target = _copy_key(real, index).directory(root)
        target.mkdir(parents=True)
        for file in real.directory(root).iterdir():
            os.link(file, target / file.name)
    git(["add", "."], root)
    git([*TEST_AUTHOR, "commit", "--quiet", "-m", "one submission under many run ids"], root)
    return root, real


def test_one_signed_submission_copied_under_many_run_ids_is_refused_once_per_copy(
    shared: SharedRepo, copied: tuple[Path, SubmissionKey], capsys: pytest.CaptureFixture[str],
) -> None:
    root, real = copied
    code = main(["audit", str(root), "--json", *shared.audit_args])
    assert code == ExitCode.VERIFICATION_FAILED
    audits = {s["submission"]: s for s in json.loads(capsys.readouterr().out)["submissions"]}
    assert len(audits) == COPIES + 2  # cpu, its copies, and simnpu's own
    others = f" and {COPIES - 1} other path(s)"
    # The copy filed where its payload digest belongs is the one verified in full.
    checks = audits[str(real)]["checks"]
    assert [c["number"] for c in checks if not c["passed"]] == [REPLAY]
    assert checks[REPLAY - 1]["why"].endswith(others)
    for index in (1, COPIES):
        copy = audits[str(_copy_key(real, index))]["checks"]
        assert copy[INTEGRITY - 1]["why"] == (
            f"not checked: a copy of the signed payload audited as {real}"
        )
        assert copy[REPLAY - 1]["why"].startswith("the same signed payload is also submitted as")
        assert copy[REPLAY - 1]["why"].endswith(others)
    simnpu = next(s for k, s in audits.items() if "/simnpu/" in k)
    assert simnpu["passed"], simnpu


def test_the_gate_counts_no_copy_and_names_each_once(
    shared: SharedRepo, copied: tuple[Path, SubmissionKey], capsys: pytest.CaptureFixture[str],
) -> None:
    root, real = copied
    policy = root.parent / "gate.yaml"
    policy.write_text("min_pass_rate: {}\nmin_grade: non-conformant\nrequired_vendors: [cpu]\n"
                      "max_failing_age_hours: 24\n")
    code = main(["gate", "--release", real.torch_release, str(root), "--gate-policy", str(policy),
                 *shared.audit_args])
    lines = capsys.readouterr().out.splitlines()
    assert code != ExitCode.OK  # cpu, required, has no result the audit accepts
    rejected = [line for line in lines if line.startswith("rejected ")]
    assert len(rejected) == COPIES + 1
    assert all(len(line) < 400 for line in lines)  # one path named per line, never all of them
    assert lines[-1].startswith("gate: CLOSED"), lines[-3:]
