"""``ckit audit REPO``: the shared repository's CI check, one numbered line per check.

Every printed line goes through ``printable``: paths and reasons quote what submitters wrote.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from pathlib import Path

from kit.cli import add_command
from kit.errors import ExitCode
from kit.printable import printable
from kit.repository.audit_options import (
    add_audit_options,
    add_content_cache_option,
    audit_from_args,
)
from kit.repository.interface import CheckResult, RepositoryAudit
from kit.repository.pull_request import MAINTAINERS_VERDICT, SCOPE_CHECK, is_maintainers_change

#: A check not run because one it needs failed: neither passed nor a failure of its own.
SKIPPED_MARK = "–"


def check_line(check: CheckResult) -> str:
    mark = "✓" if check.passed else SKIPPED_MARK if check.skipped else "✗"
    why = f": {check.why}" if check.why else ""
    return printable(f"  {check.number}. {mark} {check.title}{why}")


def _section(heading: str, checks: Iterable[CheckResult]) -> list[str]:
    return [printable(heading), *(check_line(check) for check in checks)]


def audit_lines(audit: RepositoryAudit) -> list[str]:
    lines = _section("repository", audit.checks)
    for submission in audit.submissions:
        lines += _section(str(submission.key), submission.checks)
    lines.append(_verdict(audit))
    return lines


def _verdict(audit: RepositoryAudit) -> str:
    """The last line, which the repository's bot reads for its label: a maintainers' pull
    request that passed is for review, never audit-passed."""
    repository = "passed" if all(check.passed for check in audit.checks) else "FAILED"
    if audit.passed and is_maintainers_change(audit.checks):
        listed = sum(check.number == SCOPE_CHECK for check in audit.checks)
        return f"{MAINTAINERS_VERDICT}, {listed} path(s) listed for review; repository checks " \
               f"{repository}"
    failed = sum(not submission.passed for submission in audit.submissions)
    return (f"{'PASSED' if audit.passed else 'FAILED'}: {len(audit.submissions)} submission(s) "
            f"audited, {failed} failed; repository checks {repository}")


def _audit(args: argparse.Namespace) -> int:
    audit = audit_from_args(args, args.repo)
    if args.json:
        print(json.dumps(audit.to_json(), indent=2, sort_keys=True))
    else:
        for line in audit_lines(audit):
            print(line)
    return ExitCode.OK if audit.passed else ExitCode.VERIFICATION_FAILED


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers,
        "audit",
        "audit the shared repository: every submission's layout, signature, path, required "
        "tests, skip policy, grade and uniqueness, one numbered line per check",
        ["ckit audit .", "ckit audit . --changed-since origin/main --json"],
    )
    parser.add_argument(
        "repo", type=Path, metavar="REPO_OR_DIR", help="a checkout of the repository, or a copy"
    )
    parser.add_argument(
        "--changed-since", metavar="REF",
        help="audit a pull request: the submissions with files changed since REF (git diff "
        "REF...HEAD), and any other path it changes (refused beside submissions; listed for "
        "review in a maintainers' pull request)",
    )
    parser.add_argument("--json", action="store_true", help="print the audit as JSON")
    add_audit_options(parser)
    add_content_cache_option(parser)
    parser.set_defaults(handler=_audit)
