"""``ckit diff A B``: which tests regressed, improved, appeared or vanished between two runs."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kit.cli import add_command
from kit.errors import ExitCode, InputError
from kit.report.read import read_report
from kit.rundir import REPORT_JSON
from kit.views.diff import diff_lines, diff_reports

#: What ``ckit diff`` exits with when a test passed in A and not in B (errors are 2-6).
REGRESSED_EXIT = 1
DEFAULT_LIMIT = 50

_EXIT_CODES = f"""
exit codes:
  0   nothing regressed (tests may have improved, changed, appeared or vanished)
  {REGRESSED_EXIT}   at least one test passed in A and not in B
  2-4 usage error, unreadable report, or reports of different standards"""


def _diff(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise InputError("--limit must be at least 1")
    diff = diff_reports(read_report(args.a), read_report(args.b),
                        allow_other_standard=args.allow_other_standard)
    if args.json:
        # ASCII-only JSON: no byte of a report field reaches the terminal unescaped.
        print(json.dumps(diff.to_json(), indent=2, ensure_ascii=True))
    else:
        print("\n".join(diff_lines(diff, args.limit)))
    return REGRESSED_EXIT if diff.regressed else ExitCode.OK


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers,
        "diff",
        "compare two runs' reports test by test: regressed (PASS in A, not in B), improved, "
        "changed, appeared, vanished, with their error figures",
        ["ckit diff results/cpu/old results/cpu/new",
         f"ckit diff before/{REPORT_JSON} after/{REPORT_JSON} --json"],
    )
    parser.epilog = (parser.epilog or "") + "\n" + _EXIT_CODES
    parser.add_argument("a", type=Path, metavar="A",
                        help=f"the earlier run (directory or {REPORT_JSON})")
    parser.add_argument("b", type=Path, metavar="B",
                        help=f"the later run (directory or {REPORT_JSON})")
    parser.add_argument("--allow-other-standard", action="store_true",
                        help="compare reports judged by different standards")
    parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT, metavar="N",
                        help=f"tests shown per category (default {DEFAULT_LIMIT}; --json has all)")
    parser.add_argument("--json", action="store_true", help="print the diff as JSON")
    parser.set_defaults(handler=_diff)
