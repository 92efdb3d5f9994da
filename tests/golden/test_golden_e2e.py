"""End to end: ``ckit run --golden`` through the flows tier, then ``ckit golden check``.

The run is a subprocess, as a vendor runs it; verify and golden check read its directory
through the same CLI in this process (a subprocess each would import torch again).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from golden_helpers import ckit_runner

from kit.cli import main
from kit.errors import ExitCode
from kit.golden.manifest import load_manifest
from kit.rundir import GOLDEN_MANIFEST

pytestmark = pytest.mark.slow(seconds=45)

TEST_ID = "flows/executorch_xnnpack/opinfo/add/float32/0"


def test_flows_run_with_golden_passes_golden_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ckit = ckit_runner(tmp_path)

    keyring = tmp_path / "keyring"
    assert ckit("keys", "generate", "--vendor", "cpu", "--keyring", str(keyring)).returncode == 0
    out = tmp_path / "out"
    ran = ckit("run", "--vendor", "cpu", "--tier", "flows", "--flows", "executorch_xnnpack",
               "--select", TEST_ID, "--golden", "--out", str(out))
    assert f"golden: 1 artifact(s) listed in {out / GOLDEN_MANIFEST}" in ran.stderr, ran.stderr
    manifest, _ = load_manifest(out)
    assert [(e.flow, e.test_id, e.program) for e in manifest.entries] == [
        ("executorch_xnnpack", TEST_ID, "pte")
    ]
    assert main(["verify", str(out), "--keyring", str(keyring)]) == ExitCode.OK
    capsys.readouterr()
    checked = main(["golden", "check", str(out)])
    stdout = capsys.readouterr().out
    assert checked == ExitCode.OK, stdout
    assert stdout.splitlines()[-1] == (
        "golden check PASSED: 1 entries, 1 re-run, 0 failed, 0 unlisted file(s); "
        "the run could not write 0 artifact(s)"
    )
    program = out / "golden" / "executorch_xnnpack" / TEST_ID / "program.pte"
    data = bytearray(program.read_bytes())
    data[len(data) // 2] ^= 0x01
    program.write_bytes(bytes(data))
    tampered = main(["golden", "check", str(out)])
    assert tampered == 4
    assert capsys.readouterr().out.splitlines()[0] == (
        f"FAIL executorch_xnnpack {TEST_ID} (files): golden/executorch_xnnpack/{TEST_ID}/"
        "program.pte changed after the run (its sha256 is not the manifest's)"
    )
