"""The README's certify command for the built-in vendor, as written, in a fresh clone of the kit:
``make certify VENDOR=cpu`` makes the key, runs every tier but deploy, verifies; then the report
covers every locked test and one changed byte in any signed file fails verify."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from readme_clone import fresh_clone, readme_block, run_block
from runner_helpers import run_ckit

pytestmark = [pytest.mark.slow(seconds=300), pytest.mark.heavy]

CERTIFY_HEADING = "## Certify the built-in default vendor (one command)"


@pytest.fixture(scope="module")
def certified(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("certify")
    kit = fresh_clone(base / "kit")
    # The private key's default home is the user's (~/.config/ckit/keys): the test's own.
    env = {**os.environ, "HOME": str(base / "home"), "XDG_CONFIG_HOME": str(base / "config")}
    env.pop("CKIT_SIGNING_KEY", None)
    block = readme_block(CERTIFY_HEADING)
    assert block == "make certify VENDOR=cpu\n"
    done = run_block(block, kit, env, timeout=1800)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    (out,) = (kit / "results" / "cpu").iterdir()  # results/cpu/<UTC stamp>
    assert f"certify: results/cpu/{out.name} (ckit run exit code 0)" in done.stdout
    assert "OK: cpu report signed by" in done.stdout
    return {"out": out, "keyring": kit / "signing" / "keyring", "base": base}


def test_cpu_run_is_conformant_and_covers_every_locked_test(certified: dict[str, Path]) -> None:
    from kit.standard import load_standard
    from kit.tiers.registry import complete_run_tiers

    report = json.loads((certified["out"] / "report.json").read_text())
    assert report["grade"]["name"] == "conformant"
    standard = load_standard()
    # The default tiers: every one but deploy (kit.tiers.registry.complete_run_tiers).
    expected = {t for tier in complete_run_tiers() for t in standard.test_ids(tier)}
    statuses = {record["id"]: record["status"] for record in report["records"]}
    assert set(statuses) == expected
    # Optional model sources absent here: reported as not applicable, never as passed.
    optional = {t for t in expected if t.startswith(("models/timm/", "models/torchbench/"))}
    assert optional and all(statuses[t] == "NOT_APPLICABLE" for t in optional)
    assert {s for t, s in statuses.items() if t not in optional} <= {"PASS", "NOT_APPLICABLE"}


def test_verify_accepts_the_signed_report(certified: dict[str, Path]) -> None:
    result = run_ckit(
        ["verify", str(certified["out"] / "report.dsse.json"), "--keyring",
         str(certified["keyring"])], dict(os.environ),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("OK: cpu report signed by")


@pytest.mark.parametrize("name", ["report.json", "junit.xml", "results.csv", "summary.md"])
def test_verify_rejects_one_changed_byte_in_each_file(
    certified: dict[str, Path], tmp_path: Path, name: str
) -> None:
    tampered = tmp_path / "tampered"
    shutil.copytree(certified["out"], tampered)
    data = bytearray((tampered / name).read_bytes())
    data[len(data) // 2] ^= 0x01
    (tampered / name).write_bytes(bytes(data))
    result = run_ckit(
        ["verify", str(tampered / "report.dsse.json"), "--keyring", str(certified["keyring"])],
        dict(os.environ),
    )
    assert result.returncode == 4
    assert name in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
