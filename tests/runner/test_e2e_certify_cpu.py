"""The README's certify flow for the built-in vendor, for real: key, full run, verify, tamper."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from runner_helpers import run_ckit

pytestmark = [pytest.mark.slow(seconds=300), pytest.mark.heavy]


@pytest.fixture(scope="module")
def certified(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    import os

    base = tmp_path_factory.mktemp("certify")
    env = dict(os.environ)
    env["XDG_CONFIG_HOME"] = str(base / "config")
    env.pop("CKIT_SIGNING_KEY", None)
    keyring = base / "keyring"
    key = base / "keys" / "cpu.pem"
    generated = run_ckit(
        ["keys", "generate", "--vendor", "cpu", "--out", str(key), "--keyring", str(keyring)], env
    )
    assert generated.returncode == 0, generated.stderr
    out = base / "results"
    # Two workers of one torch thread each: the same run, with less CPU than one worker whose
    # torch spreads tiny ops over both cores.
    run = run_ckit(["run", "--vendor", "cpu", "--key", str(key), "--workers", "2",
                    "--out", str(out)], env, timeout=1800)
    assert run.returncode == 0, run.stderr[-3000:]
    return {"out": out, "keyring": keyring, "base": base}


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
         str(certified["keyring"])], {**__import__("os").environ},
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
        {**__import__("os").environ},
    )
    assert result.returncode == 4
    assert name in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
