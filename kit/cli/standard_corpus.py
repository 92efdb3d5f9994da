"""``ckit standard check-corpus``: judge recorded device outputs with the standard's rules."""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path

from kit.cli import add_command
from kit.errors import ExitCode, InputError
from kit.standard import load_standard


def register_check_corpus(actions: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    check = add_command(
        actions,
        "check-corpus",
        "judge every recorded (device output, reference) pair of a corpus with the standard's "
        "numerics rules; exit 0 only when none fails",
        [
            "ckit standard check-corpus ../shared/corpus/cuda-h100-unit.npz",
            "ckit standard check-corpus corpus.npz --all --json",
        ],
    )
    check.add_argument("corpus", type=Path, metavar="FILE", help="a .npz corpus archive")
    check.add_argument("--all", action="store_true", help="print passing tests too")
    check.add_argument("--json", action="store_true", help="print one JSON object instead")
    check.set_defaults(handler=check_corpus)


def check_corpus(args: argparse.Namespace) -> int:
    from kit.tiers.unit.corpus import judge_corpus, load_corpus

    if not args.corpus.is_file():
        raise InputError(f"{args.corpus}: no such corpus file")
    verdicts = list(judge_corpus(load_standard(), load_corpus(args.corpus)))
    totals = collections.Counter(v.verdict for v in verdicts)
    shown = [v for v in verdicts if args.all or v.verdict != "PASS"]
    if args.json:
        print(json.dumps({"totals": dict(totals), "tests": [v.to_json() for v in shown]}))
    else:
        for verdict in shown:
            print(_line(verdict))
        words = ", ".join(f"{totals[k]} {k}" for k in ("PASS", "FAIL", "UNKNOWN"))
        print(f"{len(verdicts)} recorded tests: {words}")
    return int(ExitCode.OK if totals["PASS"] == len(verdicts) else ExitCode.NOT_CONFORMANT)


def _line(verdict: object) -> str:
    from kit.tiers.unit.corpus import CorpusVerdict

    assert isinstance(verdict, CorpusVerdict)
    worst = verdict.worst
    if worst is None:
        return f"{verdict.verdict} {verdict.test_id}: {verdict.message}"
    figures = (
        f"{worst.ratio:.3g}x the bound, {worst.max_ulps:.3g} ulps of {worst.dtype}, "
        f"max abs err {worst.max_abs_err:.3g} in {worst.where}"
    )
    return f"{verdict.verdict} {verdict.test_id}: {figures}"
