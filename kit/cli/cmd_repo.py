"""``ckit repo init DIR``: start a shared repository (``kit.repository.repo_init``)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import kit
from kit.cli import add_command, help_when_no_action
from kit.errors import ExitCode, InputError
from kit.printable import printable
from kit.repository.github_audit import AuditWorkflowOptions
from kit.repository.repo_config import CONFIG_DIR
from kit.repository.repo_init import RepoInitOptions, init_repository
from kit.signing.keys import check_vendor_id, passphrase_from_env

_GITHUB_REPOSITORY = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+")
_REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*")


def _workflow_options(args: argparse.Namespace) -> AuditWorkflowOptions:
    if not _GITHUB_REPOSITORY.fullmatch(args.kit_repository):
        raise InputError(f"--kit-repository {args.kit_repository!r} is not OWNER/NAME")
    for option, value in (("--kit-ref", args.kit_ref), ("--branch", args.branch)):
        if not _REF.fullmatch(value):
            raise InputError(f"{option} {value!r} is not a git ref name")
    return AuditWorkflowOptions(args.kit_repository, args.kit_ref, args.branch)


def _init(args: argparse.Namespace) -> int:
    options = RepoInitOptions(
        root_key=args.root_key,
        root_passphrase=passphrase_from_env(),
        pilot=args.pilot,
        required_vendors=tuple(sorted({check_vendor_id(v) for v in args.required_vendor})),
        workflow=_workflow_options(args),
    )
    made = init_repository(args.directory, options)
    print(printable(f"shared repository: {made.directory}"))
    print(printable(f"root private key:  {args.root_key} (keep it offline)"))
    print(f"root keyid:        {made.root_keyid}")
    print(printable(f"auditor's choices: {made.config.directory} (--repo-config {CONFIG_DIR})"))
    print(printable(f"workflow:          {made.workflow}"))
    print("next: add vendor keys (ckit keys add, ckit keys vendor, ckit keys sign-keyring), "
          "commit and push")
    return ExitCode.OK



def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers,
        "repo",
        "set up the shared repository vendors submit to",
        ["ckit repo init results --root-key /media/offline/root.pem --kit-repository org/ckit"],
    )
    help_when_no_action(parser)
    actions = parser.add_subparsers(dest="repo_command", metavar="ACTION")
    init = add_command(
        actions,
        "init",
        "write a new shared repository: a root-signed keyring (root key kept outside), the "
        "released-kit list holding this kit, the acceptance and gate policies, and a GitHub "
        "Actions workflow that audits pull requests and publishes the portal",
        ["ckit repo init results --root-key /media/offline/root.pem --kit-repository org/ckit "
         "--required-vendor acme"],
    )
    init.add_argument("directory", type=Path, metavar="DIR", help="new or empty directory")
    init.add_argument("--root-key", type=Path, required=True,
                      help="where to write the root private key: outside DIR, then offline "
                      "(encrypted when $CKIT_KEY_PASSPHRASE is set)")
    init.add_argument("--kit-repository", required=True, metavar="OWNER/NAME",
                      help="the kit's GitHub repository, which the workflow installs from")
    init.add_argument("--kit-ref", default=f"v{kit.__version__}",
                      help="the kit's tag the workflow installs (default: this kit's version)")
    init.add_argument("--branch", default="main", help="the repository's main branch")
    init.add_argument("--pilot", action="store_true",
                      help="a trial repository: accept narrowed runs (any grade, no skip-policy "
                      "condition); without it, the standard's acceptance.yaml as it is")
    init.add_argument("--required-vendor", action="append", default=[], metavar="VENDOR",
                      help="a vendor the gate requires (repeat the option)")
    init.set_defaults(handler=_init)
