"""Stand-ins for the commands a canary template's scripts call (pip's interpreter, ckit, gh):
each records its argv, so a test runs the rendered script in a real shell and reads what it ran.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from kit.cli import main
from kit.errors import ExitCode

#: Records its argv (NUL-separated, one call a line); ``ckit run`` makes its --out directory
#: and exits $STUB_RUN_EXIT, ``ckit show`` prints a comment.
_STUB = """#!/bin/bash
{ printf '%s\\0' "$(basename "$0")" "$@"; echo; } >> "$STUB_LOG"
if [ "$(basename "$0")" = ckit ] && [ "$1" = run ]; then
  while [ $# -gt 0 ]; do [ "$1" = --out ] && mkdir -p "$2"; shift; done
  exit "${STUB_RUN_EXIT:-0}"
fi
if [ "$(basename "$0")" = ckit ] && [ "$1" = show ]; then echo "### ckit canary run"; fi
exit 0
"""


@dataclass(frozen=True)
class Stubs:
    bin: Path
    log: Path

    def calls(self) -> list[list[str]]:
        if not self.log.exists():
            return []
        text = self.log.read_text(encoding="utf-8")
        return [line.split("\0")[:-1] for line in text.splitlines()]

    def run(
        self, argv: list[str], env: dict[str, str], cwd: Path
    ) -> subprocess.CompletedProcess[str]:
        path = f"{self.bin}:{os.environ['PATH']}"
        return subprocess.run(argv, env={"PATH": path, "STUB_LOG": str(self.log), **env},
                              cwd=cwd, capture_output=True, text=True, check=False)


def make_stubs(where: Path, names: tuple[str, ...] = ("python", "ckit", "gh")) -> Stubs:
    where.mkdir(parents=True, exist_ok=True)
    for name in names:
        stub = where / name
        stub.write_text(_STUB, encoding="utf-8")
        stub.chmod(0o755)
    return Stubs(where, where.parent / "calls.log")


def render(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = main(["template", *args])
    captured = capsys.readouterr()
    assert code == ExitCode.OK, captured.err
    return captured.out


def refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The one stderr line of a refused template."""
    assert main(["template", *args]) == ExitCode.INPUT_ERROR
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    return line


def github_canary(capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    text = render(capsys, "github-canary", "--vendor", "acme", "--baseline", "/srv/acme-cert",
                  "--runner-label", "acme-npu", *extra)
    workflow = yaml.safe_load(text)
    assert isinstance(workflow, dict)
    return workflow


def step(workflow: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [s for s in workflow["jobs"]["canary"]["steps"] if s.get("name") == name]
    return found
