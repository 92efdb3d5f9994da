"""``ckit render DIR``: the derived files of a ``body``-format run, rendered from its body.

A body's junit.xml, results.csv and summary.md are no signed claims (``kit.report.body``): they
are views of the body, rendered on demand, for CI (a job summary, a test report) and people.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from kit.cli import add_command
from kit.errors import ExitCode, InputError
from kit.formats.derived import body_derived
from kit.outfiles import write_new_file
from kit.report.read import read_body
from kit.rundir import BODY_FILES, REPORT_JSON, report_files

#: What ``ckit render`` writes: every report format's file but report.json, whose place the
#: body takes (``kit.formats.derived.body_derived`` renders them).
_VIEWS = tuple(name for name in report_files() if name != REPORT_JSON)


def _render(args: argparse.Namespace) -> int:
    out = args.out or args.dir
    rendered = body_derived(read_body(args.dir))
    present = [name for name in rendered if os.path.lexists(out / name)]
    if present:
        raise InputError(f"{out} already holds {', '.join(present)}; render into another "
                         "directory (--out)")
    out.mkdir(parents=True, exist_ok=True)
    for name, data in rendered.items():
        print(write_new_file(out / name, data))
    return ExitCode.OK


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers,
        "render",
        f"render {', '.join(_VIEWS)} from a body-format run's {' and '.join(BODY_FILES)} "
        "(views of the report, never signed)",
        ["ckit render results/acme", "ckit render submission --out /tmp/views"],
    )
    parser.add_argument("dir", type=Path, metavar="DIR", help="a body-format run directory")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="where the files go (default: DIR); none may be there already")
    parser.set_defaults(handler=_render)
