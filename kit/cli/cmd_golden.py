"""``ckit golden check DIR``: re-run a run's golden programs with the reference runtimes.

One line per failing entry (and per file under golden/ the manifest does not list), then a
summary; exit 0 when everything holds, 4 (verification failed) otherwise. Every printed field
goes through ``printable``: test ids and paths come from the manifest.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kit.cli import add_command, help_when_no_action
from kit.errors import ExitCode, InputError


def _check(args: argparse.Namespace) -> int:
    from kit.golden_check.check import check_golden

    if args.sample is not None and args.sample < 0:
        raise InputError("--sample must be a non-negative number of entries")
    if not args.dir.is_dir():
        raise InputError(f"{args.dir}: not a directory; pass a run's output directory or a "
                         "submission directory")
    result = check_golden(args.dir, args.sample, args.seed)
    if args.json:
        print(json.dumps(result.to_json(), indent=2, sort_keys=True, ensure_ascii=True))
    else:
        for line in result.problem_lines():
            print(line)
        print(result.summary())
    return ExitCode.OK if result.passed else ExitCode.VERIFICATION_FAILED



def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers,
        "golden",
        "check a run's golden artifacts (ckit run --golden): their manifest, their bytes, and "
        "each program re-run with the reference runtime of its format",
        ["ckit golden check results/cpu",
         "ckit golden check submissions/2.13/acme/1.0.0/RUN --sample 5 --seed RUN --json"],
    )
    help_when_no_action(parser)
    actions = parser.add_subparsers(dest="golden_command", metavar="ACTION")
    check = add_command(
        actions,
        "check",
        "check the golden artifacts of a run or submission directory (exit 0: every entry "
        "holds; 4: an artifact failed; 3: unreadable input)",
        ["ckit golden check results/cpu", "ckit golden check results/cpu --sample 5 --seed 7"],
    )
    check.add_argument("dir", type=Path, metavar="DIR", help="a run's --out or a submission")
    check.add_argument("--sample", type=int, metavar="N",
                       help="re-run only N entries drawn at random (every file is still hashed)")
    check.add_argument("--seed", default="0", metavar="S",
                       help="seed of the --sample draw; the same seed draws the same entries")
    check.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    check.set_defaults(handler=_check)
