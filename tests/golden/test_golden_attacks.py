"""``ckit golden check`` on real programs: a fresh run's artifacts pass; each attack on them
fails with the one line that names what was changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from golden_helpers import ONNX_FLOW, ONNX_TEST, PTE_FLOW, PTE_TEST, GoldenRun

from kit.cli import main
from kit.errors import ExitCode
from kit.golden.manifest import load_manifest
from kit.golden.tensors import tensor_bytes
from kit.hashing import sha256_bytes
from kit.rundir import GOLDEN_MANIFEST

PTE_DIR = f"golden/{PTE_FLOW}/{PTE_TEST}"
ONNX_DIR = f"golden/{ONNX_FLOW}/{ONNX_TEST}"


def golden_check(run_dir: Path, capsys: pytest.CaptureFixture[str], *extra: str
                 ) -> tuple[int, str, str]:
    code = main(["golden", "check", str(run_dir), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def flip_byte(path: Path, offset: int = 0) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def edit_manifest(run_dir: Path, edit: object) -> None:
    document = json.loads((run_dir / GOLDEN_MANIFEST).read_text())
    edit(document)  # type: ignore[operator]
    (run_dir / GOLDEN_MANIFEST).write_text(json.dumps(document))


def test_fresh_artifacts_pass(golden_run: GoldenRun, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = golden_check(golden_run.run_dir, capsys)
    assert code == ExitCode.OK
    assert out.splitlines() == [
        "golden check PASSED: 2 entries, 2 re-run, 0 failed, 0 unlisted file(s); "
        "the run could not write 0 artifact(s)"
    ]


def test_output_byte_flipped(golden_run: GoldenRun, capsys: pytest.CaptureFixture[str]) -> None:
    flip_byte(golden_run.run_dir / ONNX_DIR / "outputs" / "0.bin", 5)
    code, out, _ = golden_check(golden_run.run_dir, capsys)
    assert code == ExitCode.VERIFICATION_FAILED
    assert out.splitlines()[0] == (
        f"FAIL {ONNX_FLOW} {ONNX_TEST} (files): {ONNX_DIR}/outputs/0.bin changed after the run "
        "(its sha256 is not the manifest's)"
    )
    assert "1 failed" in out.splitlines()[-1]


def test_program_byte_flipped(golden_run: GoldenRun, capsys: pytest.CaptureFixture[str]) -> None:
    flip_byte(golden_run.run_dir / PTE_DIR / "program.pte", 100)
    code, out, _ = golden_check(golden_run.run_dir, capsys)
    assert code == ExitCode.VERIFICATION_FAILED
    assert out.splitlines()[0] == (
        f"FAIL {PTE_FLOW} {PTE_TEST} (files): {PTE_DIR}/program.pte changed after the run "
        "(its sha256 is not the manifest's)"
    )


def test_manifest_byte_changed(golden_run: GoldenRun, capsys: pytest.CaptureFixture[str]) -> None:
    def change_a_digest(document: dict) -> None:  # type: ignore[type-arg]
        listed = document["entries"][0]["files"][4]
        listed["sha256"] = ("0" if listed["sha256"][0] != "0" else "1") + listed["sha256"][1:]

    edit_manifest(golden_run.run_dir, change_a_digest)
    code, out, _ = golden_check(golden_run.run_dir, capsys)
    assert code == ExitCode.VERIFICATION_FAILED
    assert out.splitlines()[0] == (
        f"FAIL {PTE_FLOW} {PTE_TEST} (files): {PTE_DIR}/outputs/0.bin changed after the run "
        "(its sha256 is not the manifest's)"
    )


def test_manifest_entry_dropped(golden_run: GoldenRun, capsys: pytest.CaptureFixture[str]
                                ) -> None:
    edit_manifest(golden_run.run_dir, lambda document: document["entries"].pop(0))
    code, out, _ = golden_check(golden_run.run_dir, capsys)
    assert code == ExitCode.VERIFICATION_FAILED
    assert out.splitlines()[0] == f"FAIL {PTE_DIR}/inputs/0.bin: not listed in the manifest"
    assert out.splitlines()[-1].startswith("golden check FAILED: 1 entries, 1 re-run, 0 failed, "
                                           "7 unlisted file(s)")


def test_artifact_added_unlisted(golden_run: GoldenRun, capsys: pytest.CaptureFixture[str]
                                 ) -> None:
    (golden_run.run_dir / PTE_DIR / "outputs" / "1.bin").write_bytes(b"\0" * 4)
    code, out, _ = golden_check(golden_run.run_dir, capsys)
    assert code == ExitCode.VERIFICATION_FAILED
    assert out.splitlines()[0] == f"FAIL {PTE_DIR}/outputs/1.bin: not listed in the manifest"


def test_symlink_added_unlisted(golden_run: GoldenRun, capsys: pytest.CaptureFixture[str]
                                ) -> None:
    (golden_run.run_dir / "golden" / "elsewhere").symlink_to("/etc")
    code, out, _ = golden_check(golden_run.run_dir, capsys)
    assert code == ExitCode.VERIFICATION_FAILED
    assert out.splitlines()[0] == "FAIL golden/elsewhere: not listed in the manifest"


def test_path_escape_in_manifest(golden_run: GoldenRun, capsys: pytest.CaptureFixture[str]
                                 ) -> None:
    def escape(document: dict) -> None:  # type: ignore[type-arg]
        document["entries"][0]["files"][0]["path"] = f"{PTE_DIR}/inputs/../../../../../etc/passwd"

    edit_manifest(golden_run.run_dir, escape)
    code, _, err = golden_check(golden_run.run_dir, capsys)
    assert code == ExitCode.VERIFICATION_FAILED
    assert err.splitlines() == [
        f"ckit: error: {GOLDEN_MANIFEST}: entries[0] files[0]: path "
        f"'{PTE_DIR}/inputs/../../../../../etc/passwd' is not a file of entry {PTE_DIR}"
    ]


def test_test_id_escape_in_manifest(golden_run: GoldenRun, capsys: pytest.CaptureFixture[str]
                                    ) -> None:
    edit_manifest(golden_run.run_dir,
                  lambda document: document["entries"][1].update(test_id="../../outside"))
    code, _, err = golden_check(golden_run.run_dir, capsys)
    assert code == ExitCode.VERIFICATION_FAILED
    assert err.splitlines() == [
        f"ckit: error: {GOLDEN_MANIFEST}: entries[1]: test '../../outside': segment '..' is not "
        "a plain name (empty, hidden, '..' or odd characters)"
    ]


def test_output_forged_with_its_digest(golden_run: GoldenRun,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The outputs rewritten and the manifest updated to match: only the re-run can tell."""
    import torch

    path = golden_run.run_dir / PTE_DIR / "outputs" / "0.bin"
    data, _ = tensor_bytes(torch.full((3, 4), 0.5))
    path.write_bytes(data)

    def follow(document: dict) -> None:  # type: ignore[type-arg]
        document["entries"][0]["files"][4]["sha256"] = sha256_bytes(data)

    edit_manifest(golden_run.run_dir, follow)
    code, out, _ = golden_check(golden_run.run_dir, capsys)
    assert code == ExitCode.VERIFICATION_FAILED
    line = out.splitlines()[0]
    assert line.startswith(f"FAIL {PTE_FLOW} {PTE_TEST} (re-run): 12/12 elements outside the "
                           "bound in output[0]: max abs err ")
    assert line.endswith("(atol 0.0001, rtol 0.001)")


def test_sidecar_shape_forged(golden_run: GoldenRun, capsys: pytest.CaptureFixture[str]) -> None:
    sidecar = json.dumps({"dtype": "float32", "shape": [4, 3]}).encode()
    (golden_run.run_dir / PTE_DIR / "outputs" / "0.json").write_bytes(sidecar)

    def follow(document: dict) -> None:  # type: ignore[type-arg]
        document["entries"][0]["files"][5]["sha256"] = sha256_bytes(sidecar)
        document["entries"][0]["files"][5]["size"] = len(sidecar)

    edit_manifest(golden_run.run_dir, follow)
    code, out, _ = golden_check(golden_run.run_dir, capsys)
    assert code == ExitCode.VERIFICATION_FAILED
    assert out.splitlines()[0] == (
        f"FAIL {PTE_FLOW} {PTE_TEST} (re-run): output 0 is torch.float32 [3, 4], stored "
        "torch.float32 [4, 3]"
    )


def test_sample_is_seeded(golden_run: GoldenRun, capsys: pytest.CaptureFixture[str]) -> None:
    first = golden_check(golden_run.run_dir, capsys, "--sample", "1", "--seed", "run-7", "--json")
    again = golden_check(golden_run.run_dir, capsys, "--sample", "1", "--seed", "run-7", "--json")
    assert first[0] == again[0] == ExitCode.OK
    rerun = [[e["test_id"] for e in json.loads(out)["entries"] if e["rerun"]]
             for _, out, _ in (first, again)]
    assert len(rerun[0]) == 1 and rerun[0] == rerun[1]


def test_no_manifest_is_an_input_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    code, _, err = golden_check(tmp_path, capsys)
    assert code == ExitCode.INPUT_ERROR
    assert err.splitlines() == [f"ckit: error: golden manifest {tmp_path / GOLDEN_MANIFEST} "
                                "not found"]


def test_manifest_lists_every_artifact(golden_run: GoldenRun) -> None:
    manifest, _ = load_manifest(golden_run.run_dir)
    assert [(e.flow, e.test_id, e.program) for e in manifest.entries] == [
        (PTE_FLOW, PTE_TEST, "pte"), (ONNX_FLOW, ONNX_TEST, "onnx")
    ]
    assert len(manifest.entries[1].files) == 7  # 1 input, 2 outputs, each with a sidecar; program
