"""Which run a command reads when given the directory above runs: ``make certify`` writes each run
to ``results/<vendor>/<UTC stamp>/``, so ``results/cpu`` is where a reader looks first."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kit.errors import InputError
from kit.rundir import RunDir

#: How ``make certify`` names its runs (the Makefile's ``RUN_STAMP``): a UTC time, so the names
#: sort in the order the runs started.
RUN_STAMP = re.compile(r"\d{8}T\d{6}Z")


@dataclass(frozen=True)
class ChosenRun:
    path: Path
    #: The line that says which run of a parent directory was taken; None when given a run.
    note: str | None = None


def holds_report(directory: Path) -> bool:
    run = RunDir(directory)
    return run.report_json.is_file() or run.holds_body()


def choose_run(target: Path) -> ChosenRun:
    """``target`` itself, unless it is a directory holding no report but run directories: then
    the newest of stamped runs (or the only run), or one line naming them when no order is
    known. A directory holding neither is left to the reader, which says so in one line."""
    if not target.is_dir() or holds_report(target):
        return ChosenRun(target)
    runs = sorted(child for child in target.iterdir() if child.is_dir() and holds_report(child))
    if len(runs) == 1:
        return ChosenRun(runs[0], f"showing {runs[0]}, the only run in {target}")
    if runs and all(RUN_STAMP.fullmatch(run.name) for run in runs):
        return ChosenRun(runs[-1], f"showing {runs[-1]}, the newest of the {len(runs)} runs "
                                   f"in {target}")
    if runs:
        names = ", ".join(run.name for run in runs)
        raise InputError(f"{target}: no report, but {len(runs)} runs ({names}); name one, "
                         f"e.g. ckit show {runs[-1]}")
    return ChosenRun(target)
