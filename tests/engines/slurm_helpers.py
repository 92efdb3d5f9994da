"""The real CLI for the Slurm tests, and the ckit the cluster's jobs run.

A plain module (not conftest) so test files can import it by a name no other area uses.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

KIT_ROOT = Path(__file__).resolve().parents[2]

CkitCli = Callable[..., subprocess.CompletedProcess[str]]


def node_ckit() -> str:
    """The ckit the jobs run: this interpreter's own (they inherit PYTHONPATH from sbatch, so
    it imports this checkout's kit)."""
    ckit = Path(sys.executable).with_name("ckit")
    assert ckit.is_file(), f"no ckit next to {sys.executable}: install the kit (make install)"
    return str(ckit)


def ckit_cli(tmp_path: Path, path: str | None = None) -> CkitCli:
    """Runs the real CLI with keys under ``tmp_path`` (the user's are untouched); ``path``
    replaces PATH (to take Slurm's commands away)."""
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "PYTHONPATH": str(KIT_ROOT)}
    env.pop("CKIT_SIGNING_KEY", None)
    if path is not None:
        env["PATH"] = path

    def ckit(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "kit", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=timeout, check=False)

    return ckit


def error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The one line a refused command prints; asserts it printed exactly one."""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]
