"""``ckit keys``: vendor signing keys, root keys, and the keyring's signed manifest.

``generate`` makes a vendor key and files its public key; ``root-generate`` makes a root key.
``add``, ``retire`` and ``revoke`` edit keyring.json (which drops its root signatures: they no
longer cover it); ``sign-keyring`` adds one root signature; ``list`` shows each key and whether
the manifest's signatures hold against the pinned roots (``kit.signing.trust``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import getpass
import json
import sys
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from kit.bounded_read import read_regular_file
from kit.cli import add_command, help_when_no_action
from kit.errors import ExitCode, InputError, VerificationError
from kit.printable import printable
from kit.signing.keyring import (
    MANIFEST_NAME,
    MANIFEST_SIGNATURE_NAME,
    PUBLIC_KEY_SUFFIX,
    Keyring,
    KeyringManifest,
    KeyStatus,
    ManifestEntry,
    VendorIdentity,
    add_public_key,
    default_keyring_dir,
    format_utc,
    load_keyring,
    load_manifest_for_edit,
    parse_utc,
    sign_manifest,
    with_entry,
    with_identity,
    with_status,
    write_manifest,
)
from kit.signing.keys import (
    PASSPHRASE_ENV,
    check_private_key_target,
    check_vendor_id,
    default_key_path,
    generate_private_key,
    keyid_of,
    load_private_key,
    load_public_key,
    passphrase_from_env,
    private_key_pem,
    public_key_pem,
    read_passphrase_file,
    write_atomically,
    write_private_key,
)
from kit.signing.trust import default_roots_dir, load_trusted_keyring

#: Without --not-after, a key added to the keyring is valid until two years from now.
DEFAULT_KEY_LIFETIME = dt.timedelta(days=730)


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


def _root_generate(args: argparse.Namespace) -> int:
    key_path: Path = args.out
    check_private_key_target(key_path, force=args.force)
    passphrase = _new_passphrase(args)
    private_key = generate_private_key()
    public_key = private_key.public_key()
    keyid = keyid_of(public_key)
    public_dir: Path = args.public_dir or key_path.parent
    public_path = public_dir / f"{keyid}{PUBLIC_KEY_SUFFIX}"
    write_private_key(key_path, private_key_pem(private_key, passphrase), force=args.force)
    public_dir.mkdir(parents=True, exist_ok=True)
    write_atomically(public_path, public_key_pem(public_key), mode=0o644)
    encrypted = " (encrypted)" if passphrase else ""
    print(f"root private key: {key_path}{encrypted}")
    print(f"root public key:  {public_path}")
    print(f"keyid:            {keyid}")
    print("Keep the root private key offline; pin the public key in the verifiers' signing/roots.")
    return ExitCode.OK


def _cli_time(text: str, option: str) -> dt.datetime:
    """A date (midnight UTC) or an ISO 8601 time in UTC."""
    try:
        return dt.datetime.combine(dt.date.fromisoformat(text), dt.time(), dt.UTC)
    except ValueError:
        pass
    try:
        return parse_utc(text, option)
    except VerificationError as exc:
        raise InputError(str(exc)) from None


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def _report_unsigned(keyring_dir: Path, dropped: int) -> None:
    print(
        f"{MANIFEST_NAME} changed: {dropped} root signature(s) dropped (they no longer cover "
        "it); it is unsigned until the roots sign it again with "
        f"`ckit keys sign-keyring --keyring {keyring_dir} --root-key ROOT_KEY`"
    )


def _read_public_key(path: Path) -> Ed25519PublicKey:
    return load_public_key(read_regular_file(path, limit=1 << 16, what="public key"), path)


def _add(args: argparse.Namespace) -> int:
    vendor_id = check_vendor_id(args.vendor)
    public_key = _read_public_key(args.public_key)
    keyid = keyid_of(public_key)
    not_before = _cli_time(args.not_before, "--not-before") if args.not_before else _now()
    not_after = _now() + DEFAULT_KEY_LIFETIME
    if args.not_after:
        not_after = _cli_time(args.not_after, "--not-after")
    if not_before >= not_after:
        raise InputError("--not-before must be earlier than --not-after")
    entry = ManifestEntry(vendor_id, keyid, not_before, not_after, KeyStatus.ACTIVE)
    manifest = with_entry(load_manifest_for_edit(args.keyring), entry)
    filed = load_keyring(args.keyring).find(keyid)
    if filed is not None and filed.vendor != vendor_id:
        raise InputError(
            f"key {keyid[:16]} is filed under vendor {filed.vendor}; a key binds to one vendor"
        )
    public_path = add_public_key(args.keyring, vendor_id, public_key)
    dropped = write_manifest(args.keyring, manifest)
    print(f"added key {keyid} for vendor {vendor_id}: {public_path}")
    print(f"valid {format_utc(not_before)} to {format_utc(not_after)}")
    _report_unsigned(args.keyring, dropped)
    return ExitCode.OK


def _vendor(args: argparse.Namespace) -> int:
    identity = VendorIdentity(check_vendor_id(args.vendor), args.name, args.contact, args.docs_url)
    manifest = with_identity(load_manifest_for_edit(args.keyring), identity)
    dropped = write_manifest(args.keyring, manifest)
    print(printable(f"vendor {identity.vendor} is {identity.name} ({identity.contact}), "
                    f"docs {identity.docs_url}"))
    _report_unsigned(args.keyring, dropped)
    return ExitCode.OK


def _listed_keyid(manifest: KeyringManifest, text: str) -> str:
    """A full keyid, or a prefix of at least 8 hex digits naming exactly one listed key."""
    matches = [e.keyid for e in manifest.entries if len(text) >= 8 and e.keyid.startswith(text)]
    if len(matches) != 1:
        found = "is not listed" if not matches else "names more than one key"
        raise InputError(f"keyid {printable(text[:64])!r} {found} in {MANIFEST_NAME}")
    return matches[0]


def _change_status(args: argparse.Namespace, status: KeyStatus) -> int:
    manifest = load_manifest_for_edit(args.keyring)
    keyid = _listed_keyid(manifest, args.keyid)
    reason = args.reason.strip() if args.reason else None
    at = _now()
    changed = with_status(manifest, keyid, status, at, reason)
    dropped = write_manifest(args.keyring, changed)
    print(f"{status.value} key {keyid} at {format_utc(at)}")
    _report_unsigned(args.keyring, dropped)
    return ExitCode.OK


def _retire(args: argparse.Namespace) -> int:
    return _change_status(args, KeyStatus.RETIRED)


def _revoke(args: argparse.Namespace) -> int:
    if not args.reason.strip():
        raise InputError("--reason must say why the key is revoked")
    return _change_status(args, KeyStatus.REVOKED)


def _sign_keyring(args: argparse.Namespace) -> int:
    passphrase = passphrase_from_env()
    if args.passphrase_file is not None:
        passphrase = read_passphrase_file(args.passphrase_file)
    private_key = load_private_key(args.root_key, passphrase)
    signing = sign_manifest(args.keyring, private_key)
    if signing.dropped:
        print(f"dropped {signing.dropped} old signature(s): they covered an earlier "
              f"{MANIFEST_NAME}")
    print(f"signed {args.keyring / MANIFEST_NAME} version {signing.version} with root "
          f"{keyid_of(private_key.public_key())}")
    print(f"{MANIFEST_SIGNATURE_NAME} now holds {signing.signatures} root signature(s)")
    return ExitCode.OK


def _list_files_only(keyring: Keyring) -> int:
    """No manifest: today's listing, every key file (none of them vouched for by a root)."""
    if not keyring.entries:
        print(f"no keys in {keyring.directory}")
    for entry in keyring.entries:
        print(f"{entry.vendor}\t{entry.keyid}\t{printable(str(entry.path))}")
    if keyring.entries:
        print(f"(no {MANIFEST_NAME}: these keys are not listed in a root-signed manifest)")
    return ExitCode.OK


def _trust_problem(keyring_dir: Path, roots_dir: Path) -> str | None:
    """Why the manifest's root signatures do not hold; None when they do."""
    try:
        load_trusted_keyring(keyring_dir, roots_dir)
    except VerificationError as exc:
        return str(exc)
    return None


def _unlisted(keyring: Keyring, manifest: KeyringManifest) -> list[str]:
    return [str(e.path) for e in keyring.entries if manifest.find(e.keyid) is None]


def _list_json(keyring: Keyring, manifest: KeyringManifest, roots_dir: Path) -> None:
    problem = _trust_problem(keyring.directory, roots_dir)
    document = {
        "keyring": str(keyring.directory),
        "trust_roots": str(roots_dir),
        "signature_holds": problem is None,
        "signature_problem": problem,
        "version": manifest.version,
        "keys": [entry.to_json() for entry in manifest.entries],
        "vendors": [identity.to_json() for identity in manifest.identities],
        "unlisted_key_files": _unlisted(keyring, manifest),
    }
    print(json.dumps(document, indent=2, ensure_ascii=True))


def _list_text(keyring: Keyring, manifest: KeyringManifest, roots_dir: Path) -> None:
    problem = _trust_problem(keyring.directory, roots_dir)
    verdict = f"holds (roots {roots_dir})" if problem is None else f"does not hold: {problem}"
    print(printable(f"signature: {verdict}"))
    for entry in manifest.entries:
        fields = entry.to_json()
        window = f"{fields['not_before']}..{fields['not_after']}"
        extra = [fields["changed_at"] or "", entry.reason or ""]
        parts = [entry.vendor, entry.keyid, entry.status.value, window, *extra]
        print("\t".join(printable(part) for part in parts).rstrip("\t"))
    for path in _unlisted(keyring, manifest):
        print(f"unlisted (not trusted): {printable(path)}")


def _list(args: argparse.Namespace) -> int:
    keyring_dir: Path = args.keyring or default_keyring_dir()
    keyring = load_keyring(keyring_dir)
    if not (keyring_dir / MANIFEST_NAME).exists() and not args.json:
        return _list_files_only(keyring)
    manifest = load_manifest_for_edit(keyring_dir)
    roots_dir: Path = args.trust_roots or default_roots_dir()
    (_list_json if args.json else _list_text)(keyring, manifest, roots_dir)
    return ExitCode.OK



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


Actions = argparse._SubParsersAction  # type: ignore[type-arg]
_KEYRING_HELP = "keyring directory (default: the kit's signing/keyring)"


def _keyring_option(parser: argparse.ArgumentParser, *, required: bool) -> None:
    parser.add_argument("--keyring", type=Path, required=required, help=_KEYRING_HELP)


def _passphrase_options(parser: argparse.ArgumentParser) -> None:
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


def _register_root_generate(actions: Actions) -> None:
    parser = add_command(
        actions,
        "root-generate",
        "create a root key that signs keyring manifests (keep it offline)",
        ["ckit keys root-generate --out /media/offline/root-1.pem --public-dir signing/roots"],
    )
    parser.add_argument("--out", type=Path, required=True, help="root private key file")
    parser.add_argument(
        "--public-dir",
        type=Path,
        help="where to write <keyid>.pub.pem (default: beside the private key)",
    )
    _passphrase_options(parser)
    parser.add_argument("--force", action="store_true", help="replace an existing private key")
    parser.set_defaults(handler=_root_generate)


def _register_add(actions: Actions) -> None:
    parser = add_command(
        actions,
        "add",
        "file a vendor's public key and list it in keyring.json (unsigned until roots sign)",
        ["ckit keys add --keyring signing/keyring --vendor acme --public-key acme.pub.pem"],
    )
    _keyring_option(parser, required=True)
    parser.add_argument("--vendor", required=True, help="vendor id the key signs for")
    parser.add_argument("--public-key", type=Path, required=True, help="the .pub.pem to add")
    parser.add_argument(
        "--valid-from", "--not-before", dest="not_before", metavar="TIME",
        help="start of validity, UTC (default: now); date a key from when it first signed, or "
        "a run it signed before it was added is refused",
    )
    parser.add_argument("--not-after", help="end of validity, UTC (default: two years from now)")
    parser.set_defaults(handler=_add)


def _register_vendor(actions: Actions) -> None:
    parser = add_command(
        actions,
        "vendor",
        "set a vendor's name, contact and docs link in keyring.json: what the portal shows for "
        "it, whatever its reports say (unsigned until roots sign)",
        ["ckit keys vendor --keyring keyring --vendor acme --name 'Acme NPU' "
         "--contact conformance@acme.example --docs-url https://acme.example/ckit"],
    )
    _keyring_option(parser, required=True)
    parser.add_argument("--vendor", required=True, help="the vendor id")
    parser.add_argument("--name", required=True, help="the name pages show")
    parser.add_argument("--contact", required=True, help="whom to ask about its results")
    parser.add_argument(
        "--docs-url", required=True, help="https:// link: how to reproduce its results"
    )
    parser.set_defaults(handler=_vendor)


def _register_retire(actions: Actions) -> None:
    parser = add_command(
        actions,
        "retire",
        "retire a key: reports it signed before now stay valid, later ones are refused",
        ["ckit keys retire 3f2a9c0d --keyring signing/keyring"],
    )
    parser.add_argument("keyid", help="the key's keyid (or a unique prefix of 8+ digits)")
    _keyring_option(parser, required=True)
    parser.add_argument("--reason", help="why (optional)")
    parser.set_defaults(handler=_retire)


def _register_revoke(actions: Actions) -> None:
    parser = add_command(
        actions,
        "revoke",
        "revoke a key: every report it signed is refused, whatever its date",
        ["ckit keys revoke 3f2a9c0d --keyring signing/keyring --reason 'laptop stolen'"],
    )
    parser.add_argument("keyid", help="the key's keyid (or a unique prefix of 8+ digits)")
    _keyring_option(parser, required=True)
    parser.add_argument("--reason", required=True, help="why the key is revoked")
    parser.set_defaults(handler=_revoke)


def _register_sign_keyring(actions: Actions) -> None:
    parser = add_command(
        actions,
        "sign-keyring",
        "add one root signature over keyring.json (roots sign in turn up to the threshold)",
        ["ckit keys sign-keyring --keyring signing/keyring --root-key /media/offline/root-1.pem"],
    )
    _keyring_option(parser, required=True)
    parser.add_argument("--root-key", type=Path, required=True, help="root private key file")
    parser.add_argument("--passphrase-file", type=Path, help="the root key's passphrase file")
    parser.set_defaults(handler=_sign_keyring)


def _register_list(actions: Actions) -> None:
    parser = add_command(
        actions,
        "list",
        "list the keyring's keys: vendor, keyid, window, status; and whether its signature holds",
        [
            "ckit keys list",
            "ckit keys list --keyring /path/to/keyring --trust-roots /path/to/roots --json",
        ],
    )
    _keyring_option(parser, required=False)
    parser.add_argument(
        "--trust-roots", type=Path, help="pinned root keys (default: the kit's signing/roots)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=_list)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers,
        "keys",
        "manage vendor signing keys, root keys and the keyring's signed manifest",
        ["ckit keys generate --vendor acme", "ckit keys list"],
    )
    help_when_no_action(parser)
    actions = parser.add_subparsers(dest="keys_command", metavar="ACTION")
    _register_generate(actions)
    _register_root_generate(actions)
    _register_add(actions)
    _register_vendor(actions)
    _register_retire(actions)
    _register_revoke(actions)
    _register_sign_keyring(actions)
    _register_list(actions)
