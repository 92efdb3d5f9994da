"""End to end: ``ckit run --golden`` through the flows tier, then ``ckit golden check``."""

from __future__ import annotations

from pathlib import Path

import pytest
from golden_helpers import ckit_runner

from kit.golden.manifest import load_manifest
from kit.rundir import GOLDEN_MANIFEST

pytestmark = pytest.mark.slow(seconds=45)

TEST_ID = "flows/executorch_xnnpack/opinfo/add/float32/0"


def test_flows_run_with_golden_passes_golden_check(tmp_path: Path) -> None:
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
    assert ckit("verify", str(out), "--keyring", str(keyring)).returncode == 0
    checked = ckit("golden", "check", str(out))
    assert checked.returncode == 0, checked.stdout
    assert checked.stdout.splitlines()[-1] == (
        "golden check PASSED: 1 entries, 1 re-run, 0 failed, 0 unlisted file(s); "
        "the run could not write 0 artifact(s)"
    )
    program = out / "golden" / "executorch_xnnpack" / TEST_ID / "program.pte"
    data = bytearray(program.read_bytes())
    data[len(data) // 2] ^= 0x01
    program.write_bytes(bytes(data))
    tampered = ckit("golden", "check", str(out))
    assert tampered.returncode == 4
    assert tampered.stdout.splitlines()[0] == (
        f"FAIL executorch_xnnpack {TEST_ID} (files): golden/executorch_xnnpack/{TEST_ID}/"
        "program.pte changed after the run (its sha256 is not the manifest's)"
    )
