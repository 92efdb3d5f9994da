"""``ckit submit`` carries golden/ into the shared repository; ``ckit audit`` check 10 re-runs
a sample of its programs, drawn with the run id as seed, and fails a changed artifact."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from golden_helpers import ONNX_FLOW, ONNX_TEST, PTE_FLOW, PTE_TEST, GoldenRun

from kit.cli import main
from kit.golden.manifest import load_manifest
from kit.repository.audit import audit_repository
from kit.repository.interface import CheckResult
from kit.repository.layout import KEYRING_DIR, SubmissionKey
from kit.repository.submission_checks import GOLDEN, INTEGRITY, LAYOUT
from kit.repository.submit import submit_run
from kit.rundir import GOLDEN_MANIFEST

AUTHOR = ["-c", "user.name=Test Maintainer", "-c", "user.email=maintainer@example.org"]


def git(args: list[str], cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@dataclass(frozen=True)
class Submitted:
    clone: Path
    key: SubmissionKey

    @property
    def directory(self) -> Path:
        return self.key.directory(self.clone)

    def check(self, number: int, sample: int = 1) -> CheckResult:
        audit = audit_repository(self.clone, golden_sample=sample)
        (submission,) = audit.submissions
        return next(check for check in submission.checks if check.number == number)


@pytest.fixture
def submitted(golden_run: GoldenRun, tmp_path: Path) -> Submitted:
    """The golden run submitted (real git, real verify) to a repository holding its key."""
    seed = tmp_path / "seed"
    git(["init", "--quiet", "-b", "main", str(seed)], tmp_path)
    shutil.copytree(golden_run.keyring, seed / KEYRING_DIR)
    git(["add", "."], seed)
    git([*AUTHOR, "commit", "--quiet", "-m", "The shared repository"], seed)
    submission = submit_run(golden_run.run_dir, str(seed))
    assert submission.clone is not None
    return Submitted(submission.clone, submission.key)


def test_submit_carries_every_listed_artifact(submitted: Submitted) -> None:
    manifest, _ = load_manifest(submitted.directory)
    listed = sorted(manifest.listed_paths())
    on_disk = sorted(p.relative_to(submitted.directory).as_posix()
                     for p in (submitted.directory / "golden").rglob("*") if p.is_file())
    assert on_disk == listed and len(listed) == 14


def test_audit_reruns_a_seeded_sample(submitted: Submitted) -> None:
    check = submitted.check(GOLDEN, sample=1)
    assert check.passed
    assert check.why == f"2 entries intact, 1 re-run (sample 1, seed {submitted.key.run_id})"
    assert submitted.check(LAYOUT).passed


def test_audit_cli_takes_golden_sample(submitted: Submitted,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    main(["audit", str(submitted.clone), "--golden-sample", "2"])
    lines = capsys.readouterr().out.splitlines()
    assert (f"  10. ✓ golden artifacts: signed manifest, intact files, a seeded sample re-run: "
            f"2 entries intact, 2 re-run (sample 2, seed {submitted.key.run_id})") in lines


def test_submitted_output_byte_flipped(submitted: Submitted) -> None:
    path = submitted.directory / "golden" / ONNX_FLOW / ONNX_TEST / "outputs" / "1.bin"
    data = bytearray(path.read_bytes())
    data[0] ^= 0x01
    path.write_bytes(bytes(data))
    check = submitted.check(GOLDEN, sample=0)
    assert not check.passed
    assert check.why == (
        f"FAIL {ONNX_FLOW} {ONNX_TEST} (files): golden/{ONNX_FLOW}/{ONNX_TEST}/outputs/1.bin "
        "changed after the run (its sha256 is not the manifest's)"
    )
    assert submitted.check(INTEGRITY).passed  # the envelope still verifies: only check 10 sees it


def test_submitted_program_removed(submitted: Submitted) -> None:
    (submitted.directory / "golden" / PTE_FLOW / PTE_TEST / "program.pte").unlink()
    check = submitted.check(GOLDEN)
    assert not check.passed
    assert check.why == (
        f"FAIL {PTE_FLOW} {PTE_TEST} (files): golden/{PTE_FLOW}/{PTE_TEST}/program.pte is missing"
    )


def test_submitted_manifest_rewritten(submitted: Submitted) -> None:
    path = submitted.directory / GOLDEN_MANIFEST
    path.write_bytes(path.read_bytes().replace(b'"unwritten": 0', b'"unwritten": 9'))
    integrity = submitted.check(INTEGRITY)
    assert not integrity.passed
    assert integrity.why.startswith(f"step 7: {GOLDEN_MANIFEST} was modified after signing")
    assert submitted.check(GOLDEN).why == "not checked: the envelope did not verify"


def test_submitted_golden_without_manifest(submitted: Submitted) -> None:
    (submitted.directory / GOLDEN_MANIFEST).unlink()
    layout = submitted.check(LAYOUT)
    assert layout.why == f"golden/ without {GOLDEN_MANIFEST} listing its files"
