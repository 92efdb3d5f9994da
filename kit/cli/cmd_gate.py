"""``ckit gate --release 2.13 REPO``: may the release ship, on the vendors' audited results?

Every printed field that came from a submission goes through ``printable``.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import math
import re
from pathlib import Path

from kit.cli import add_command
from kit.errors import ExitCode, InputError
from kit.grading.wording import run_wording
from kit.printable import printable
from kit.repository import git
from kit.repository.audit_options import (
    GATE_POLICY_FLAG,
    add_audit_options,
    add_old_policy_spelling,
    audit_from_args,
    gate_policy_path,
)
from kit.repository.failing_tests import OLDEST_SHOWN
from kit.repository.gate import (
    GateResult,
    VendorGate,
    evaluate_gate,
    load_gate_policy,
    percent,
    tier_pass_rates,
    training_words,
    with_test_window,
)
from kit.tiers.registry import tier_names

#: The exit code when the gate is closed on the results: a required vendor falls short or is
#: missing, a vendor is past the failing window, or the repository's own checks failed.
GATE_CLOSED = ExitCode.GATE_CLOSED
#: The exit code when it is closed with nothing to judge (``GateResult.closures``).
NOTHING_TO_JUDGE = ExitCode.GATE_NOTHING_TO_JUDGE

#: A torch release (2.13), or one of its versions as `ckit version` prints them (2.13.0).
_RELEASE = re.compile(r"([0-9]+\.[0-9]+)(\.[0-9]+)?")
_HEADER = ("vendor", "kit", "grade", *tier_names(), "training steps", "verdict", "why")


def _rate_text(rate: float | None) -> str:
    return "-" if rate is None else percent(rate)


def _row(vendor: VendorGate) -> tuple[str, ...]:
    report = vendor.latest.report if vendor.latest else None
    rates = tier_pass_rates(report) if report else {}
    kit_version = vendor.latest.key.kit_version if vendor.latest else "-"
    grade = run_wording(report).short() if report else "-"
    cells = [vendor.vendor + (" *" if vendor.required else ""), kit_version, grade]
    cells += [_rate_text(rates.get(tier)) for tier in tier_names()]
    cells.append((training_words(report) if report else None) or "-")
    return tuple(printable(cell) for cell in (*cells, vendor.verdict_text, vendor.why or "-"))


def render_table(rows: list[tuple[str, ...]]) -> list[str]:
    """Columns padded to their widest cell; the last column is left ragged."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return [
        "  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[-1]])
        for row in rows
    ]


def failing_test_lines(vendor: VendorGate, window_hours: float) -> list[str]:
    """The vendor's failing tests in a few lines: how many, how many past the window, and the
    oldest ``OLDEST_SHOWN`` with the start of their streak."""
    tests = vendor.failing_tests
    if not tests:
        return []
    closes = " (closes the gate)" if vendor.breach_closes and vendor.required else ""
    lines = [f"{vendor.vendor}: {len(tests)} failing tests, {len(vendor.breaches)} past the "
             f"{window_hours:g}h window{closes if vendor.breaches else ''}; oldest first:"]
    for test in tests[:OLDEST_SHOWN]:
        mark = "  PAST WINDOW" if test.breach else ""
        lines.append(f"  {test.test_id}  {test.status.value}  failing since "
                     f"{test.first_failed:%Y-%m-%d %H:%M}Z ({test.hours}h){mark}")
    if len(tests) > OLDEST_SHOWN:
        lines.append(f"  ... and {len(tests) - OLDEST_SHOWN} more (--json lists them all)")
    return lines


def core_aten_lines(vendor: VendorGate) -> list[str]:
    """The core ATen coverage of the vendor's latest result, where its report recorded
    attribution (``kit.report.core_aten``)."""
    report = vendor.latest.report if vendor.latest else None
    coverage = report.summary.core_aten(report.standard.torch_release) if report else None
    return [] if coverage is None else [f"{vendor.vendor}: {coverage.text()}"]


def gate_lines(result: GateResult) -> list[str]:
    """What ``ckit gate`` prints: a table, the rejected submissions, then the decision."""
    lines = [f"release {result.release} (at {result.now:%Y-%m-%d %H:%M}Z; * = required)"]
    lines += render_table([_HEADER, *(_row(vendor) for vendor in result.vendors)])
    for vendor in result.vendors:
        if vendor.latest is not None:
            lines.append(f"{vendor.vendor}: latest result {vendor.latest.key}")
            lines += core_aten_lines(vendor)
    for vendor in result.vendors:
        lines += failing_test_lines(vendor, result.policy.max_failing_age_hours)
    for check in result.repository_failures:
        lines.append(f"repository check {check.number} failed: {check.title}: {check.why}")
    for audit in result.rejected:
        failure = audit.first_failure
        reason = f"check {failure.number} ({failure.title}): {failure.why}" if failure else "none"
        lines.append(f"rejected {audit.key}: audit failed at {reason}")
    lines += [f"canary {audit.key}: not counted (a canary run is never a certificate)"
              for audit in result.canaries]
    lines += [f"closed: {reason}" for reason in result.closures]
    lines.append("gate: OPEN" if result.open else "gate: CLOSED")
    return lines


def exit_code(result: GateResult) -> ExitCode:
    if result.open:
        return ExitCode.OK
    return NOTHING_TO_JUDGE if result.closures else GATE_CLOSED


def _release(value: str) -> str:
    """The release gated: submissions are filed per release, a patch version names its own."""
    matched = _RELEASE.fullmatch(value)
    if matched is None:
        raise argparse.ArgumentTypeError(f"{value!r} is not a torch release such as 2.13 (or "
                                         "2.13.0)")
    return matched.group(1)


def _gate(args: argparse.Namespace) -> int:
    # A bad policy is refused before any audit work.
    policy = load_gate_policy(gate_policy_path(args), release=args.release)
    if args.max_age_hours is not None:
        policy = with_test_window(policy, args.max_age_hours)
    if not args.repo.is_dir():
        raise InputError(f"repository {args.repo} is not a directory")
    audit = audit_from_args(args, args.repo)
    result = evaluate_gate(audit, args.release, policy, dt.datetime.now(dt.UTC))
    if git.has_no_commit(args.repo):
        result = dataclasses.replace(result, closures=(git.NO_COMMIT_YET, *result.closures))
    if args.json:
        print(json.dumps(result.to_json(), indent=2, sort_keys=True, ensure_ascii=True))
    else:
        for line in gate_lines(result):
            print(printable(line))
    return exit_code(result)


def _hours(value: str) -> float:
    try:
        hours = float(value)
    except ValueError:
        hours = math.nan
    if not math.isfinite(hours) or hours < 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of hours (0 or more)")
    return hours


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers,
        "gate",
        "decide whether a PyTorch release may ship on the vendors' audited results: each "
        "vendor's latest result against the gate policy (grade, per-tier pass rates, required "
        "vendors, the failing window)",
        [
            "ckit gate --release 2.13 path/to/submissions-repo",
            "ckit gate --release 2.13 --gate-policy release-2.13-gate.yaml repo --json",
        ],
    )
    parser.epilog = (parser.epilog or "") + (
        "\n\nexit codes:\n"
        "  0  gate open: every required vendor meets the bar and none is past the window\n"
        "     (with --max-age-hours: nor has a test failing past it)\n"
        f"  {int(GATE_CLOSED)}  gate closed: a required vendor falls short or has no audited "
        "result,\n     a vendor is past the failing window, or the repository's checks failed\n"
        f"  {int(NOTHING_TO_JUDGE)}  gate closed with nothing to judge: a release no carried "
        "standard certifies,\n     no submission for it (or none at all), or a policy that "
        "requires no vendor\n"
        f"  {int(ExitCode.INPUT_ERROR)}  the policy file or repository could not be read"
    )
    parser.add_argument("repo", type=Path, metavar="REPO", help="the submissions repository")
    add_audit_options(parser, old_policy_spelling=False)
    parser.add_argument(
        "--release", type=_release, required=True,
        help="the torch release to gate (2.13; 2.13.0, as `ckit version` prints it, is 2.13)",
    )
    parser.add_argument(
        GATE_POLICY_FLAG,
        type=Path,
        metavar="FILE",
        dest="gate_policy",
        help="gate policy YAML (default: --repo-config's gate.yaml, else the gate.yaml of the "
        "newest standard certifying --release, else of the one `ckit standard show` names)",
    )
    add_old_policy_spelling(parser, GATE_POLICY_FLAG, "gate_policy")
    parser.add_argument(
        "--max-age-hours",
        type=_hours,
        metavar="N",
        help="the failing window in hours, for each vendor and each failing test (overrides the "
        "policy's max_failing_age_hours); a required vendor with any test failing for longer "
        "closes the gate",
    )
    parser.add_argument("--json", action="store_true", help="print the decision as JSON")
    parser.set_defaults(handler=_gate)
