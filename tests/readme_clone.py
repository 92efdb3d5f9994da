"""The README's command blocks, run as a reader copies them, in a ``git clone`` of the kit.

A clone is this repository as committed, with the working tree's standards (the kit digest
covers them: a clone of HEAD holds no uncommitted edit, and the suite's own runs are judged by the
working tree's) and a ``.venv/bin/ckit`` that runs the code under test with the clone as its
checkout (``CKIT_HOME``): what the kit refuses to write inside its checkout is refused there, and
the Makefile's targets (``make certify``) call it as they call an installed kit.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

KIT_ROOT = Path(__file__).resolve().parents[1]


def readme_block(heading: str, nth: int = 0) -> str:
    """The ``nth`` ``sh`` block after ``heading`` in README.md (0: the first)."""
    section = (KIT_ROOT / "README.md").read_text(encoding="utf-8").split(heading, 1)[1]
    return section.split("```sh\n")[nth + 1].split("```", 1)[0]


def fresh_clone(workspace: Path) -> Path:
    """A clone of this repository at ``workspace``, set up as ``make install`` leaves one."""
    subprocess.run(["git", "clone", "--quiet", str(KIT_ROOT), str(workspace)], check=True,
                   capture_output=True)
    shutil.rmtree(workspace / "standards")
    shutil.copytree(KIT_ROOT / "standards", workspace / "standards")
    ckit_script = workspace / ".venv" / "bin" / "ckit"
    ckit_script.parent.mkdir(parents=True)
    # PYTHONSAFEPATH (-P, inherited by the run's workers): the clone's own kit/ (the working
    # directory) must not shadow the code under test.
    ckit_script.write_text(f'#!/bin/sh\nCKIT_HOME="{workspace}" PYTHONSAFEPATH=1 exec '
                           f'"{sys.executable}" -m kit "$@"\n', encoding="utf-8")
    ckit_script.chmod(0o755)
    return workspace


def run_block(block: str, workspace: Path, env: dict[str, str],
              timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``block`` as one ``bash -eu`` script in ``workspace``: a failing line stops it."""
    return subprocess.run(["bash", "-eu", "-c", block], cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)
