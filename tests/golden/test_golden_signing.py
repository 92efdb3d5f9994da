"""The manifest is signed with the report; the writer never fails a run; ``ckit run --golden``
writes and signs a manifest."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from golden_helpers import PTE_FLOW, GoldenRun, Program, ckit_runner, save_programs

from kit.cli import main
from kit.errors import ExitCode
from kit.golden import GoldenWriter
from kit.golden.manifest import load_manifest, write_manifest
from kit.rundir import GOLDEN_MANIFEST, GOLDEN_UNWRITTEN_LOG, WORKERS_DIR
from kit.runner.judge import judge_context
from kit.verification.verify import verify_envelope


def test_manifest_is_a_signed_subject(golden_run: GoldenRun) -> None:
    verified = verify_envelope(golden_run.run_dir, keyring_dir=golden_run.keyring)
    assert GOLDEN_MANIFEST in [subject.name for subject in verified.subjects]


def test_manifest_changed_after_signing(golden_run: GoldenRun,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = golden_run.run_dir / GOLDEN_MANIFEST
    path.write_bytes(path.read_bytes().replace(b'"unwritten": 0', b'"unwritten": 1'))
    code = main(["verify", str(golden_run.run_dir), "--keyring", str(golden_run.keyring)])
    assert code == ExitCode.VERIFICATION_FAILED
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"ckit: error: step 7: {GOLDEN_MANIFEST} was modified after signing")


def test_manifest_deleted_after_signing(golden_run: GoldenRun,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    (golden_run.run_dir / GOLDEN_MANIFEST).unlink()
    code = main(["verify", str(golden_run.run_dir), "--keyring", str(golden_run.keyring)])
    assert code == ExitCode.VERIFICATION_FAILED
    assert capsys.readouterr().err.startswith(
        f"ckit: error: step 7: subject file {GOLDEN_MANIFEST} is missing from "
    )


def test_unwritable_directory_is_a_warning(tmp_path: Path, programs: list[Program],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    (run_dir / WORKERS_DIR).mkdir(parents=True)
    (run_dir / "golden").write_text("a file where the artifact directory belongs\n")
    writer = save_programs(run_dir, programs)  # must not raise
    assert writer.failures == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"ckit: warning: golden artifact of {programs[0].test_id} "
                             f"({PTE_FLOW}) not written: ")
    assert len((run_dir / WORKERS_DIR / GOLDEN_UNWRITTEN_LOG).read_text().splitlines()) == 2
    (run_dir / "golden").unlink()
    assert write_manifest(run_dir, run_dir / WORKERS_DIR).unwritten == 2


@pytest.mark.parametrize("test_id", ["unit/../../escape", "/etc/cron.d/x", "unit//0", ".hidden"])
def test_unsafe_test_id_is_a_warning(tmp_path: Path, programs: list[Program], test_id: str,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "deep" / "run"
    (run_dir / WORKERS_DIR).mkdir(parents=True)
    program = programs[0]
    writer = GoldenWriter(run_dir, run_dir / WORKERS_DIR)
    writer.save(test_id, program.flow, program.inputs, program.outputs, program.lowered)
    assert writer.failures == 1
    err = capsys.readouterr().err
    assert f"golden artifact of {test_id} " in err and "not written: ValueError:" in err, err
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    log = f"deep/run/workers/{GOLDEN_UNWRITTEN_LOG}"
    assert written == ["deep", "deep/run", "deep/run/workers", log]


def test_the_judge_context_carries_the_writer_of_a_golden_run(tmp_path: Path) -> None:
    assert judge_context(None).golden is None
    writer = judge_context(tmp_path).golden
    assert writer is not None and writer.out_dir == tmp_path
    assert writer.log_path == tmp_path / WORKERS_DIR / GOLDEN_UNWRITTEN_LOG


def test_resaved_entry_replaces_the_old_one(tmp_path: Path, programs: list[Program],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A resumed run may judge a test again: its entry is replaced, never mixed."""
    run_dir = tmp_path / "run"
    save_programs(run_dir, programs)
    program = programs[0]
    writer = GoldenWriter(run_dir, run_dir / WORKERS_DIR)
    writer.save(program.test_id, program.flow, program.inputs[:1], program.outputs, None)
    assert writer.failures == 0
    write_manifest(run_dir, run_dir / WORKERS_DIR)
    manifest, _ = load_manifest(run_dir)
    assert [(e.program, len(e.tensor_files("inputs"))) for e in manifest.entries] == [
        (None, 1), ("onnx", 1)
    ]
    assert main(["golden", "check", str(run_dir)]) == ExitCode.OK
    assert "2 entries, 1 re-run, 0 failed" in capsys.readouterr().out


def test_tensors_of_every_dtype_round_trip() -> None:
    from kit.golden.tensors import DTYPE_NAMES, tensor_bytes, tensor_from

    for name in DTYPE_NAMES:
        tensor = (torch.arange(12) % 3).to(getattr(torch, name)).reshape(3, 4)[:, 1:]
        data, sidecar = tensor_bytes(tensor)
        assert torch.equal(tensor_from(data, sidecar), tensor)
    empty, sidecar = tensor_bytes(torch.empty(0, 3))
    assert tensor_from(empty, sidecar).shape == (0, 3)


@pytest.mark.slow
def test_run_with_golden_signs_its_manifest(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A real narrowed ``ckit run --golden``: no flow test is selected, so the manifest lists
    nothing, yet it is written before signing, signed, and checks clean (verify and golden
    check through the CLI in this process: a subprocess each would import torch again)."""
    ckit = ckit_runner(tmp_path)

    keyring = tmp_path / "keyring"
    assert ckit("keys", "generate", "--vendor", "cpu", "--keyring", str(keyring)).returncode == 0
    out = tmp_path / "out"
    ran = ckit("run", "--vendor", "cpu", "--tier", "unit", "--select",
               "unit/opinfo/add/float32/0", "--golden", "--out", str(out))
    assert f"golden: 0 artifact(s) listed in {out / GOLDEN_MANIFEST}" in ran.stderr, ran.stderr
    verified = main(["verify", str(out), "--keyring", str(keyring)])
    assert verified == ExitCode.OK, capsys.readouterr().err
    capsys.readouterr()
    assert main(["golden", "check", str(out)]) == ExitCode.OK
    assert capsys.readouterr().out.startswith("golden check PASSED: 0 entries")
    manifest, _ = load_manifest(out)
    assert manifest.entries == () and manifest.unwritten == 0
