"""Real shard runs for the sharding tests (a unique module name: several test dirs have one)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

#: Small and mixed: unit tests that run (add's samples in every dtype, none of its variants: the
#: scale ones alone cost about 11 s of CPU), and flow tests the cpu vendor does not claim (the
#: kit settles them NOT_APPLICABLE without a worker).
SELECTION = ("--tier", "unit,flows", "--select", "unit/opinfo/add/*/?",
             "--select", "flows/*/opinfo/a*/float32/*")


def ckit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kit", *args], capture_output=True, text=True,
                          env=env or private_env(), check=False)


def private_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("CKIT_SIGNING_KEY", None)
    env.pop("CKIT_TODAY", None)
    return env


def signing_env(base: Path) -> tuple[dict[str, str], Path]:
    """A private config home holding cpu's key, and the keyring that holds its public key: a
    shard signs with the key, the merge checks each shard with the keyring."""
    env = {**private_env(), "XDG_CONFIG_HOME": str(base / "config")}
    keyring = base / "keyring"
    made = ckit("keys", "generate", "--vendor", "cpu", "--keyring", str(keyring), env=env)
    assert made.returncode == 0, made.stderr
    return env, keyring


def cpu_key(env: dict[str, str]) -> Path:
    return Path(env["XDG_CONFIG_HOME"]) / "ckit" / "keys" / "cpu.pem"


def run_shard(out: Path, shard: str, *extra: str, env: dict[str, str]) -> Path:
    """Shard ``shard`` of the selection, signed with cpu's key in ``env`` as any shard is."""
    done = ckit("run", "--vendor", "cpu", *SELECTION, "--shard", shard, "--out", str(out),
                *extra, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return out


def report_of(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "report.json").read_text())  # type: ignore[no-any-return]


def error_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in done.stderr.splitlines() if line.startswith("ckit: error:")]
    assert len(lines) == 1, done.stderr[-2000:]
    return lines[0]
