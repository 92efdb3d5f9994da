"""``ckit verify ENVELOPE``: check a signed report against the keyring, then its content.

Every printed line goes through ``printable``: the report's fields are the signer's words, and
a carriage return or an ANSI escape in one could redraw the line into a forged verdict.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kit.cli import add_command
from kit.errors import ExitCode
from kit.printable import printable
from kit.signing.sign import ENVELOPE_NAME
from kit.signing.verify import VerifiedReport, verify_envelope


def _lines(verified: VerifiedReport) -> list[str]:
    verdict = (
        f"OK: {verified.vendor} report signed by {verified.keyid[:16]}, "
        f"kit {verified.kit_version}, grade {verified.grade_name}"
    )
    return [verdict, *(f"note: {note}" for note in verified.notes)]


def _verify(args: argparse.Namespace) -> int:
    verified = verify_envelope(args.envelope, keyring_dir=args.keyring, files_dir=args.files)
    for line in _lines(verified):
        print(printable(line))
    return ExitCode.OK


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers,
        "verify",
        "verify a signed report: signature, signer's vendor, every report file's digest, and "
        "the report's content (schema, standard, kit, times, grade recomputed)",
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
