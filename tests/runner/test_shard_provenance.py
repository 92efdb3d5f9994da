"""Shards with provenance (issue 24): whoever can write a shard directory but holds no key of
the shard's vendor (another user of the Slurm root or the Kubernetes volume, another job of the
CI run) cannot flip a record, re-grade, reseal the envelope and have ``ckit merge`` sign it.
Each shard is signed by its vendor's key as any run is; the merge refuses anything else. One
real shard of a tiny selection, forged here in copies."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from sharding_helpers import ckit, error_line, signing_env

from kit.errors import ExitCode
from kit.signing.keyring import add_public_key
from kit.signing.keys import (
    generate_private_key,
    load_private_key,
    private_key_pem,
    write_private_key,
)
from kit.signing.sign import sign_output_dir, write_unsigned_envelope

pytestmark = pytest.mark.slow(seconds=40)  # one real shard, then four merges

#: One unit test the cpu vendor passes, and flow tests it does not claim (NOT_APPLICABLE).
SELECTION = ("--tier", "unit,flows", "--select", "unit/opinfo/add/float32/0",
             "--select", "flows/*/opinfo/abs/float32/*")


@pytest.fixture(scope="module")
def shard(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("provenance")
    env, _ = signing_env(base)
    out = base / "shard-0-of-1"
    done = ckit("run", "--vendor", "cpu", *SELECTION, "--shard", "0/1", "--out", str(out),
                env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return out


def _keyring(shard: Path) -> Path:
    return shard.parent / "keyring"


def _merge(shard: Path, given: Path, out: Path) -> Any:
    return ckit("merge", str(given), "--out", str(out), "--no-sign",
                "--keyring", str(_keyring(shard)))


def _forged(shard: Path, tmp_path: Path) -> Path:
    """A copy whose NOT_APPLICABLE record says PASS (the signature is refused before any
    content check, so a forger's re-grade would change nothing here)."""
    forged = tmp_path / "shard-0-of-1"
    shutil.copytree(shard, forged)
    report = json.loads((forged / "report.json").read_text())
    flipped = next(r for r in report["records"] if r["status"] == "NOT_APPLICABLE")
    flipped["status"] = "PASS"
    (forged / "report.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    (forged / "report.dsse.json").unlink()
    return forged


def _own_key(tmp_path: Path, name: str) -> Path:
    key = generate_private_key()
    path = tmp_path / f"{name}.pem"
    write_private_key(path, private_key_pem(key, None), force=False)
    return path


def test_the_signed_shard_merges(shard: Path, tmp_path: Path) -> None:
    done = _merge(shard, shard, tmp_path / "merged")
    # Graded as the narrowed run it is: partial (its tests pass) or non-conformant.
    assert done.returncode in (ExitCode.NOT_CONFORMANT, ExitCode.PARTIAL), done.stderr
    assert (tmp_path / "merged" / "report.json").is_file()


def test_forged_shard_flipping_fail_to_pass_is_refused_by_merge(
    shard: Path, tmp_path: Path
) -> None:
    forged = _forged(shard, tmp_path)
    write_unsigned_envelope(forged)  # resealed: the envelope lists the forged report's digest
    done = _merge(shard, forged, tmp_path / "merged")
    assert done.returncode == 3
    assert error_line(done) == (
        f"ckit: error: merge step 1: {forged}: step 3: unsigned report (written with "
        "--no-sign); sign it with `ckit sign DIR`")
    assert not (tmp_path / "merged").exists()


def test_forged_shard_signed_by_a_key_outside_the_keyring_is_refused_by_merge(
    shard: Path, tmp_path: Path
) -> None:
    forged = _forged(shard, tmp_path)
    sign_output_dir(forged, _own_key(tmp_path, "forger"), None)
    line = error_line(_merge(shard, forged, tmp_path / "merged"))
    assert line.startswith(f"ckit: error: merge step 1: {forged}: step 4: signing key ")
    assert "is not in the keyring" in line


def test_forged_shard_signed_by_another_vendors_key_is_refused_by_merge(
    shard: Path, tmp_path: Path
) -> None:
    other = _own_key(tmp_path, "simnpu")
    keyring = tmp_path / "keyring"
    shutil.copytree(_keyring(shard), keyring)
    add_public_key(keyring, "simnpu", load_private_key(other, None).public_key())
    forged = _forged(shard, tmp_path)
    sign_output_dir(forged, other, None)
    done = ckit("merge", str(forged), "--out", str(tmp_path / "merged"), "--no-sign",
                "--keyring", str(keyring))
    line = error_line(done)
    assert line.startswith(f"ckit: error: merge step 1: {forged}: step 6: key ")
    assert "of vendor simnpu signed a report claiming vendor 'cpu'" in line

