"""``ckit submit RUN_DIR --repo REPO``: file a verified run on a new branch of the repository."""

from __future__ import annotations

import argparse
from pathlib import Path

from kit.cli import add_command
from kit.errors import ExitCode
from kit.printable import printable
from kit.repository.audit_options import (
    add_audit_options,
    add_content_cache_option,
    precheck_from_args,
)
from kit.repository.submit import Submission, submit_run


def _lines(submission: Submission, repo: str) -> list[str]:
    lines = [f"submitted: {submission.key}", f"branch:    {submission.branch}",
             f"commit:    {submission.commit}"]
    if submission.pushed:
        lines.append(f"pushed to: {repo}")
    elif submission.clone is not None:
        lines.append(f"clone:     {submission.clone} (not pushed; push the branch from there, "
                     "or submit again with --push)")
    return lines


def _submit(args: argparse.Namespace) -> int:
    submission = submit_run(
        args.run_dir, args.repo, push=args.push, branch=args.branch, keyring_dir=args.keyring,
        precheck=precheck_from_args(args),
    )
    for line in _lines(submission, args.repo):
        print(printable(line))
    return ExitCode.OK


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers,
        "submit",
        "file a signed run in the shared repository: verify it, run the audit's checks on it "
        "(refused if the audit would refuse it), then commit it on a new branch "
        "(submissions/<torch-release>/<vendor>/<kit-version>/<run-id>/) of a fresh clone",
        [
            "ckit submit results/cpu --repo git@example.org:conformance/results.git --push",
            "ckit submit results/acme --repo ../results --branch submit/acme-june",
        ],
    )
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a signed run directory")
    parser.add_argument(
        "--repo", required=True, metavar="GIT_URL_OR_PATH",
        help="the shared repository: a URL, a clone or a bare repository",
    )
    parser.add_argument("--push", action="store_true", help="push the new branch to the origin")
    parser.add_argument(
        "--branch", help="branch name (default: submit/<vendor>/<torch-release>/<run-id>)"
    )
    parser.add_argument(
        "--keyring", type=Path,
        help="keyring to verify with when the repository has none (default: the kit's)",
    )
    # The audit's own choices, with the audit's defaults: submit refuses what audit would.
    add_audit_options(parser, submit=True)
    add_content_cache_option(parser)
    parser.set_defaults(handler=_submit)
