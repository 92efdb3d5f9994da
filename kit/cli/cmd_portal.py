"""``ckit portal REPO -o SITE/``: a static site of the repository's audited submissions."""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from kit.cli import add_command
from kit.errors import ExitCode, InputError
from kit.printable import printable
from kit.repository.audit_options import add_audit_options, audit_from_args, gate_policy_path
from kit.repository.gate import load_gate_policy


def _portal(args: argparse.Namespace) -> int:
    if not args.repo.is_dir():
        raise InputError(f"repository {args.repo} is not a directory")
    from kit.portal.builder import build_site  # jinja2 is imported only by this command

    policy = load_gate_policy(gate_policy_path(args))
    now = dt.datetime.now(dt.UTC)
    audit = audit_from_args(args, args.repo, now)
    written = build_site(audit, args.out, policy, now)
    failed = sum(1 for submission in audit.submissions if not submission.passed)
    print(
        printable(
            f"wrote {len(written)} files to {args.out} ({len(audit.submissions)} submissions, "
            f"{failed} failed their audit); open {args.out / 'index.html'}"
        )
    )
    return ExitCode.OK


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers,
        "portal",
        "build a static website of a submissions repository: the model x accelerator matrix, "
        "per-vendor results and trends, and every submission's audit (no JavaScript needed)",
        ["ckit portal path/to/submissions-repo -o site/"],
    )
    parser.add_argument("repo", type=Path, metavar="REPO", help="the submissions repository")
    add_audit_options(parser)
    parser.add_argument(
        "--gate-policy", type=Path, metavar="FILE", dest="gate_policy",
        help="the gate policy each release's verdict is judged by (default: --repo-config's "
        "gate.yaml, else the current standard's)",
    )
    parser.add_argument(
        "-o",
        "--out",
        type=Path,
        required=True,
        metavar="SITE",
        help="output directory: new, empty, or a site this command built before (replaced)",
    )
    parser.set_defaults(handler=_portal)
