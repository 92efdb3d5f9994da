"""``ckit show DIR|report.json``: read a finished run's report in the terminal."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from kit.cli import add_command
from kit.cli.comment_baseline import check_baseline, with_baseline_check
from kit.cli.run_choice import choose_run
from kit.errors import ExitCode, InputError
from kit.report.read import read_report
from kit.rundir import REPORT_JSON
from kit.runner.config import previous_run_of
from kit.views.ci_links import ci_links
from kit.views.comment import comment_lines
from kit.views.show import show_lines, show_view

DEFAULT_LIMIT = 20


def _show(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise InputError("--limit must be at least 1")
    chosen = choose_run(args.report)
    source = read_report(chosen.path)
    view = show_view(source, args.limit, previous_run_of(source.path.parent))
    if args.against is not None and args.format != "comment":
        raise InputError("--against goes with --format comment (`ckit diff` compares two runs)")
    if chosen.note is not None:
        # The text's first line; JSON and the comment stay what they are: the note goes aside.
        plain = args.format == "text" and not args.json
        print(chosen.note, file=sys.stdout if plain else sys.stderr)
    if args.format == "comment":
        baseline = read_report(args.against) if args.against is not None else None
        links = ci_links(os.environ, source.report.standard.version)
        lines = comment_lines(view, baseline, args.limit, links)
        if args.against is not None:
            trust = check_baseline(args.against, source.report.vendor_id, args.keyring)
            lines = with_baseline_check(lines, trust)
        print("\n".join(lines))
    elif args.json or args.format == "json":
        # ASCII-only JSON: no byte of a report field reaches the terminal unescaped.
        print(json.dumps(view.to_json(), indent=2, ensure_ascii=True))
    else:
        print("\n".join(show_lines(view, args.limit)))
    return ExitCode.OK


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers,
        "show",
        "show a run's report: grade and why, counts per tier, failures grouped by op and "
        "dtype, and the largest errors (the report is read, not verified: see ckit verify)",
        ["ckit show results/cpu", f"ckit show results/cpu/{REPORT_JSON} --json",
         "ckit show results/canary --format comment --against results/cpu"],
    )
    parser.add_argument("report", type=Path, metavar="DIR|REPORT",
                        help=f"a run's output directory, or its {REPORT_JSON}; a directory of runs "
                        "(results/cpu, where make certify writes results/cpu/<UTC stamp>): its "
                        "newest run, named on the first line")
    parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT, metavar="N",
                        help=f"failure groups and top errors shown (default {DEFAULT_LIMIT})")
    parser.add_argument("--json", action="store_true", help="print the view as JSON")
    parser.add_argument("--format", choices=("text", "json", "comment"), default="text",
                        help="text (default), json (as --json), or comment: a short markdown "
                             "comment for a pull request")
    parser.add_argument("--against", type=Path, metavar="BASELINE",
                        help="with --format comment: list the tests that regressed against "
                             "this run (the vendor's last certified one) first; it is verified "
                             "(signature, vendor, standard), or the comment's first line says "
                             "it is not")
    parser.add_argument("--keyring", type=Path, metavar="DIR",
                        help="with --against: the keyring the baseline is verified with "
                             "(default: the kit's signing/keyring)")
    parser.set_defaults(handler=_show)
