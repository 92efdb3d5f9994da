"""``ckit verify ENVELOPE``: check a signed report against the keyring."""

from __future__ import annotations

import argparse
from pathlib import Path

from kit.cli import add_command
from kit.errors import ExitCode
from kit.signing.sign import ENVELOPE_NAME
from kit.signing.verify import VerifiedReport, verify_envelope


def _summary(verified: VerifiedReport) -> str:
    grade = f", grade {verified.grade_name}" if verified.grade_name else ""
    return (
        f"OK: {verified.vendor} report signed by {verified.keyid[:16]}, "
        f"kit {verified.kit_version}{grade}"
    )


def _verify(args: argparse.Namespace) -> int:
    verified = verify_envelope(args.envelope, keyring_dir=args.keyring, files_dir=args.files)
    print(_summary(verified))
    return ExitCode.OK


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers,
        "verify",
        "verify a signed report: signature, signer's vendor, and every report file's digest",
        [
            f"ckit verify results/acme/{ENVELOPE_NAME}",
            f"ckit verify submission/{ENVELOPE_NAME} --keyring signing/keyring --files submission",
        ],
    )
    parser.add_argument(
        "envelope",
        type=Path,
        metavar="ENVELOPE",
        help=f"the {ENVELOPE_NAME} file (or the directory holding it)",
    )
    parser.add_argument(
        "--keyring", type=Path, help="keyring directory (default: the kit's signing/keyring)"
    )
    parser.add_argument(
        "--files",
        type=Path,
        metavar="DIR",
        help="directory holding the report files (default: the envelope's directory)",
    )
    parser.set_defaults(handler=_verify)
