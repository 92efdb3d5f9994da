"""``ckit sign DIR``: sign a run's report files with the vendor's private key."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kit.cli import add_command
from kit.errors import ExitCode, InputError
from kit.rundir import ENVELOPE_NAME, REPORT_JSON, RunDir
from kit.signing.dsse import decode_envelope
from kit.signing.keyring import load_keyring
from kit.signing.keys import default_key_path, passphrase_from_env, read_passphrase_file
from kit.signing.sign import (
    refuse_changes_since_unsigned_run,
    report_vendor_id,
    sign_output_dir,
)
from kit.strict_json import loads_strict


def _vendor(args: argparse.Namespace) -> str:
    claimed = report_vendor_id(args.dir)
    if args.vendor is not None and args.vendor != claimed:
        raise InputError(
            f"{RunDir(args.dir).report_file} claims vendor {claimed!r}, not {args.vendor!r}; "
            "a vendor's key signs only that vendor's reports"
        )
    return claimed


def _signed_keyid(envelope_path: Path) -> str:
    envelope = decode_envelope(loads_strict(envelope_path.read_bytes(), what=ENVELOPE_NAME))
    return envelope.signatures[0].keyid


def _warn_if_untrusted(vendor_id: str, keyid: str) -> None:
    """Signing works with any key; say early when verification will not trust this one yet."""
    try:
        entry = load_keyring().find(keyid)
    except InputError:
        return  # a broken keyring is ckit verify's to report
    if entry is None or entry.vendor != vendor_id:
        print(
            f"note: key {keyid[:16]} is not in the kit's keyring for vendor {vendor_id}; "
            "ckit verify rejects the report until its public key is added",
            file=sys.stderr,
        )


def _sign(args: argparse.Namespace) -> int:
    if not args.dir.is_dir():
        raise InputError(f"{args.dir}: not a directory")
    vendor_id = _vendor(args)
    key_path: Path = args.key or default_key_path(vendor_id)
    passphrase = (
        read_passphrase_file(args.passphrase_file)
        if args.passphrase_file is not None
        else passphrase_from_env()
    )
    refuse_changes_since_unsigned_run(args.dir)
    envelope_path = sign_output_dir(args.dir, key_path, passphrase)
    keyid = _signed_keyid(envelope_path)
    print(f"signed: {envelope_path} (vendor {vendor_id}, key {keyid[:16]})")
    _warn_if_untrusted(vendor_id, keyid)
    return ExitCode.OK


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers,
        "sign",
        f"sign a run's report files, writing {ENVELOPE_NAME} beside them",
        ["ckit sign results/acme", "ckit sign results/acme --key ~/keys/acme.pem"],
    )
    parser.add_argument("dir", type=Path, metavar="DIR", help="the run's output directory")
    parser.add_argument(
        "--key",
        type=Path,
        help="private key (default: $CKIT_SIGNING_KEY or <config>/ckit/keys/<vendor>.pem)",
    )
    parser.add_argument(
        "--vendor", help=f"vendor whose key signs (default: the vendor {REPORT_JSON} names)"
    )
    parser.add_argument(
        "--passphrase-file",
        type=Path,
        help="passphrase of an encrypted key (default: $CKIT_KEY_PASSPHRASE)",
    )
    parser.set_defaults(handler=_sign)
