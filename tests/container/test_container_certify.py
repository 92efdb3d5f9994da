"""``ckit run --in-container``: tiers run in the vendor image, the host signs, verify accepts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kit.container.build import BuiltImage
from kit.errors import ExitCode

# Images built from scratch (a debootstrapped base, torch and the kit installed): heavy.
pytestmark = [pytest.mark.docker, pytest.mark.heavy]


def _ckit(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kit", *args], env=env, capture_output=True,
                          text=True, timeout=1800)


def test_in_container_run_is_signed_on_the_host_and_verifies(
    cpu_image: BuiltImage, tmp_path: Path
) -> None:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    env.pop("CKIT_SIGNING_KEY", None)
    key, keyring, out = tmp_path / "keys" / "cpu.pem", tmp_path / "keyring", tmp_path / "out"
    made = _ckit(["keys", "generate", "--vendor", "cpu", "--out", str(key),
                  "--keyring", str(keyring)], env)
    assert made.returncode == 0, made.stderr

    ran = _ckit(["run", "--vendor", "cpu", "--in-container", "--image", cpu_image.tag,
                 "--tier", "deploy,unit", "--select", "deploy/*",
                 "--select", "unit/opinfo/add/float32/*", "--key", str(key), "--out", str(out)],
                env)
    # A narrowed run, never conformant; every test it ran passes: partial's exit code.
    assert ran.returncode == ExitCode.PARTIAL, ran.stderr[-3000:]

    report = json.loads((out / "report.json").read_text())
    statuses = {r["id"]: r["status"] for r in report["records"]}
    assert {t for t in statuses if t.startswith("deploy/")} == {
        "deploy/imports", "deploy/torch-pinned", "deploy/pip-check",
        "deploy/device-visible", "deploy/smoke-op", "deploy/export-run",
    }
    assert set(statuses.values()) == {"PASS"}
    container = report["environment"]["container"]
    assert container["image"] == cpu_image.tag
    assert container["image_id"] == cpu_image.image_id
    assert not list(out.rglob("*.pem"))  # the key stayed on the host

    verified = _ckit(["verify", str(out / "report.dsse.json"), "--keyring", str(keyring)], env)
    assert verified.returncode == 0, verified.stderr
