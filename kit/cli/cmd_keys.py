"""``ckit keys generate`` and ``ckit keys list``: vendor signing keys and the keyring."""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path

from kit.cli import add_command
from kit.errors import ExitCode, InputError
from kit.signing.keyring import add_public_key, default_keyring_dir, load_keyring
from kit.signing.keys import (
    PASSPHRASE_ENV,
    check_private_key_target,
    check_vendor_id,
    default_key_path,
    generate_private_key,
    keyid_of,
    load_private_key,
    passphrase_from_env,
    private_key_pem,
    read_passphrase_file,
    write_private_key,
)


def _prompt_new_passphrase() -> bytes:
    if not sys.stdin.isatty():
        raise InputError(
            f"--encrypt needs a passphrase: set {PASSPHRASE_ENV} or pass --passphrase-file"
        )
    first = getpass.getpass("passphrase for the new key: ")
    if not first:
        raise InputError("empty passphrase; leave out --encrypt for an unencrypted key")
    if getpass.getpass("repeat the passphrase: ") != first:
        raise InputError("the two passphrases differ")
    return first.encode("utf-8")


def _new_passphrase(args: argparse.Namespace) -> bytes | None:
    if args.passphrase_file is not None:
        return read_passphrase_file(args.passphrase_file)
    if not args.encrypt:
        return None
    return passphrase_from_env() or _prompt_new_passphrase()


def _keep_existing(key_path: Path, vendor_id: str, keyring_dir: Path) -> int:
    """``--if-missing`` with a key already there: keep it, and make sure the keyring has it."""
    print(f"private key: {key_path} (exists, kept)")
    try:
        public_key = load_private_key(key_path, passphrase_from_env()).public_key()
    except InputError:
        return ExitCode.OK  # encrypted and no passphrase at hand: the keyring is left as it is
    keyid = keyid_of(public_key)
    filed = load_keyring(keyring_dir).find(keyid)
    if filed is not None and filed.vendor != vendor_id:
        raise InputError(
            f"{key_path}: key {keyid[:16]} is filed under vendor {filed.vendor}; "
            f"a key binds to one vendor, so give {vendor_id} its own key (--out)"
        )
    public_path = filed.path if filed else add_public_key(keyring_dir, vendor_id, public_key)
    print(f"public key:  {public_path}")
    print(f"keyid:       {keyid}")
    return ExitCode.OK


def _generate(args: argparse.Namespace) -> int:
    vendor_id = check_vendor_id(args.vendor)
    key_path: Path = args.out or default_key_path(vendor_id)
    keyring_dir: Path = args.keyring or default_keyring_dir()
    if args.if_missing and key_path.exists():
        return _keep_existing(key_path, vendor_id, keyring_dir)
    check_private_key_target(key_path, force=args.force)
    passphrase = _new_passphrase(args)
    private_key = generate_private_key()
    write_private_key(key_path, private_key_pem(private_key, passphrase), force=args.force)
    public_path = add_public_key(keyring_dir, vendor_id, private_key.public_key())
    encrypted = " (encrypted)" if passphrase else ""
    print(f"private key: {key_path}{encrypted}")
    print(f"public key:  {public_path}")
    print(f"keyid:       {keyid_of(private_key.public_key())}")
    print("Keep the private key secret; submit the public key file to the kit's keyring.")
    return ExitCode.OK


def _list(args: argparse.Namespace) -> int:
    keyring = load_keyring(args.keyring)
    if not keyring.entries:
        print(f"no keys in {keyring.directory}")
    for entry in keyring.entries:
        print(f"{entry.vendor}\t{entry.keyid}\t{entry.path}")
    return ExitCode.OK


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return ExitCode.USAGE_ERROR


def _register_generate(actions: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        actions,
        "generate",
        "create a vendor's Ed25519 signing key and file its public key in the keyring",
        [
            "ckit keys generate --vendor acme",
            "ckit keys generate --vendor acme --encrypt",
            "ckit keys generate --vendor cpu --if-missing",
        ],
    )
    parser.add_argument("--vendor", required=True, help="vendor id the key signs for")
    parser.add_argument(
        "--out",
        type=Path,
        help="private key file (default: $CKIT_SIGNING_KEY or <config>/ckit/keys/<vendor>.pem)",
    )
    parser.add_argument(
        "--keyring", type=Path, help="keyring directory (default: the kit's signing/keyring)"
    )
    parser.add_argument(
        "--encrypt",
        action="store_true",
        help=f"encrypt the private key with a passphrase (${PASSPHRASE_ENV}, else a prompt)",
    )
    parser.add_argument(
        "--passphrase-file",
        type=Path,
        help="read the passphrase from this file (implies --encrypt)",
    )
    existing = parser.add_mutually_exclusive_group()
    existing.add_argument("--force", action="store_true", help="replace an existing private key")
    existing.add_argument(
        "--if-missing",
        action="store_true",
        help="keep an existing private key (filing its public key if the keyring lacks it)",
    )
    parser.set_defaults(handler=_generate)


def _register_list(actions: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        actions,
        "list",
        "list the keyring's keys: vendor, keyid, file",
        ["ckit keys list", "ckit keys list --keyring /path/to/keyring"],
    )
    parser.add_argument(
        "--keyring", type=Path, help="keyring directory (default: the kit's signing/keyring)"
    )
    parser.set_defaults(handler=_list)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers,
        "keys",
        "manage vendor signing keys and the keyring",
        ["ckit keys generate --vendor acme", "ckit keys list"],
    )
    parser.set_defaults(handler=lambda _args: _usage(parser))
    actions = parser.add_subparsers(dest="keys_command", metavar="ACTION")
    _register_generate(actions)
    _register_list(actions)
