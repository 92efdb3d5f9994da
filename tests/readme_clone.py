"""The README's command blocks, run as a reader copies them, in a ``git clone`` of the kit.

A clone is this repository as committed, with the working tree's standards (the kit digest
covers them: a clone of HEAD holds no uncommitted edit, and the suite's own runs are judged by the
working tree's) and a ``.venv/bin/ckit`` that runs the code under test with the clone as its
checkout (``CKIT_HOME``): what the kit refuses to write inside its checkout is refused there, and
the Makefile's targets (``make certify``) call it as they call an installed kit.

A block is named by a marker (a heading, or any text of README.md before it: its first
occurrence) and its number among the ``sh`` blocks after it, so editing the README changes what
runs; ``tests/test_readme_blocks.py`` checks that every shell block is run by a test or listed
there with why it is not.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

KIT_ROOT = Path(__file__).resolve().parents[1]
README = KIT_ROOT / "README.md"
#: The opening fence of a shell block (the only kind the README's commands are written in).
SHELL_FENCE = "```sh\n"
#: What only a shell does: an environment assignment first, pipes, lists, redirections, expansions.
SHELL_SYNTAX = re.compile(r"^\w+=|[|&;<>`$]")


@dataclass(frozen=True)
class ShellBlock:
    #: Where its opening fence starts in README.md.
    offset: int
    text: str


def shell_blocks(readme: str) -> list[ShellBlock]:
    """Every ``sh`` block of ``readme``, in order."""
    blocks, start = [], readme.find(SHELL_FENCE)
    while start != -1:
        body = start + len(SHELL_FENCE)
        end = readme.index("```", body)
        blocks.append(ShellBlock(start, readme[body:end]))
        start = readme.find(SHELL_FENCE, end + 3)
    return blocks


def find_block(readme: str, marker: str, nth: int = 0) -> ShellBlock:
    """The ``nth`` ``sh`` block after the first ``marker`` in ``readme`` (0: the first)."""
    position = readme.find(marker)
    if position == -1:
        raise LookupError(f"README.md has no {marker!r}")
    after = [block for block in shell_blocks(readme) if block.offset > position]
    if nth >= len(after):
        raise LookupError(f"README.md has {len(after)} sh block(s) after {marker!r}, not {nth + 1}")
    return after[nth]


def readme_block(heading: str, nth: int = 0) -> str:
    """The ``nth`` ``sh`` block after ``heading`` in README.md (0: the first)."""
    return find_block(README.read_text(encoding="utf-8"), heading, nth).text


def block_commands(block: str) -> list[list[str]]:
    """Each command of ``block`` as the argv bash would give it: continued lines joined, comments
    dropped. For a test that runs a block's commands in its own process (``.venv/bin/ckit`` as
    ``kit.cli.main``): plain commands only, so nothing the shell would do is left undone."""
    lines = block.replace("\\\n", " ").splitlines()
    commands = [argv for argv in (shlex.split(line, comments=True) for line in lines) if argv]
    for argv in commands:
        assert not SHELL_SYNTAX.search(" ".join(argv)), f"not a plain command: {argv}"
    return commands


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


def verify_in_clone(workspace: Path, run_dir: Path,
                    env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``.venv/bin/ckit verify RUN/report.dsse.json --keyring signing/keyring`` in the clone, as
    a reader checks a run the blocks signed there."""
    return subprocess.run([str(workspace / ".venv" / "bin" / "ckit"), "verify",
                           str(run_dir / "report.dsse.json"), "--keyring", "signing/keyring"],
                          cwd=workspace, env=env, capture_output=True, text=True, check=False)


def untracked_files(workspace: Path) -> set[str]:
    """What the blocks left in the clone that git would show a reader as new (ignored paths,
    such as ``results/``, are not)."""
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                            cwd=workspace, capture_output=True, text=True, check=True).stdout
    return {line[3:] for line in status.splitlines() if line.startswith("?? ")}
