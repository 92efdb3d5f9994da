"""A vendor's source build: the ``build`` commands of its profile, run by ``ckit vendors install``.

A vendor whose stack is compiled (a C++ PrivateUse1 backend built against the kit's torch)
cannot say so with pip requirements alone: it needs its build run against the very interpreter
that runs the kit. Each command runs through ``/bin/sh -c`` in the vendor directory with the
host's environment, the profile's ``build.env`` over it, and over both what ties the build to
the kit's interpreter: ``PYTHON`` (that interpreter), its directory first on ``PATH`` (so
``python``, ``pip`` and the tools installed beside them are the kit's) and the torch pin added to
``PIP_CONSTRAINT`` (after any constraints files already there: a ``pip install`` in the build
cannot replace the certified torch either).
Everything the commands print goes to one log file, kept after success too; a failing command
stops the build with one line naming it and the log.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path
from typing import TextIO

from kit.errors import EnvironmentProblem
from kit.vendors.profile import VendorProfile


def build_environment(profile: VendorProfile, python: str, constraints: Path) -> dict[str, str]:
    """The environment of the build commands (see the module's docstring for the order)."""
    env = {**os.environ, **profile.build.env}
    interpreter_dir = str(Path(python).parent)
    env["PATH"] = os.pathsep.join(part for part in (interpreter_dir, env.get("PATH")) if part)
    env["PYTHON"] = python
    # pip splits the variable at whitespace: the host's own constraints files stay in force.
    files = (env.get("PIP_CONSTRAINT"), str(constraints))
    env["PIP_CONSTRAINT"] = " ".join(part for part in files if part)
    return env


def new_log(vendor_id: str) -> Path:
    """A fresh file for the build's output (kept: the install's last line names it)."""
    handle, name = tempfile.mkstemp(prefix=f"ckit-build-{vendor_id}-", suffix=".log")
    os.close(handle)
    return Path(name)


def _run_command(command: str, directory: Path, env: dict[str, str], log: TextIO) -> int:
    log.write(f"$ {command}\n")
    log.flush()  # the header before the command's own output
    completed = subprocess.run(
        ["/bin/sh", "-c", command],
        cwd=directory,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        check=False,
    )
    log.write(f"[exit {completed.returncode}]\n")
    return completed.returncode


def _how_it_ended(returncode: int) -> str:
    return f"killed by signal {-returncode}" if returncode < 0 else f"exit {returncode}"


def run_build(profile: VendorProfile, python: str, constraints: Path) -> Path:
    """Run the profile's build commands in order; returns the log. The first failing command
    raises ``EnvironmentProblem`` (one line: the step, the command, the log)."""
    commands = profile.build.commands
    env = build_environment(profile, python, constraints)
    log_path = new_log(profile.id)
    with log_path.open("a", encoding="utf-8") as log:
        for number, command in enumerate(commands, start=1):
            step = f"build step {number}/{len(commands)}"
            print(f"vendors install {profile.id}: {step}: {command} (output: {log_path})",
                  flush=True)
            returncode = _run_command(command, profile.directory, env, log)
            if returncode != 0:
                raise EnvironmentProblem(
                    f"vendors install {profile.id}: {step} failed ({_how_it_ended(returncode)})"
                    f": {command!r}; its output: {log_path}"
                )
    return log_path
