"""A keyring with trust roots: only keys listed in a root-signed manifest vouch for reports.

A plain keyring trusts every ``<vendor>/<keyid>.pub.pem`` file in it, so whoever can commit a
file there can add a key. A *trusted* keyring also needs ``keyring.json`` (the keys, each with
its vendor, validity window and status) and ``keyring.json.sig``, a DSSE envelope (payload type
``application/vnd.ckit.keyring+json``) over the exact bytes of keyring.json, signed by at least
``threshold`` distinct root keys.

Root public keys are pinned by the verifier, never read from the keyring being verified: by
default the kit checkout's ``signing/roots/<keyid>.pub.pem``, or a directory the caller names.
That directory may hold ``roots.yaml`` with ``threshold: N`` (default 1). Any signature on the
manifest by a key that is not a root, a root signing twice, or a signature that does not verify
refuses the whole keyring.

What an entry allows, judged at the report's signing time (its ``run.finished_at``, the only
time the signed statement offers):

- ``active``: the key vouches for its vendor's reports signed within [not_before, not_after].
- ``retired``: as active for reports signed before ``changed_at``; later ones are refused.
- ``revoked``: refused whatever the date, since a stolen key can backdate a report.

A key listed under vendor A never vouches for vendor B. A key file the manifest does not list is
not trusted (``unlisted_key_files`` reports it). Keyids are recomputed from every key.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from kit import paths
from kit.bounded_read import FileMissing, read_regular_file
from kit.config_reader import Node
from kit.errors import InputError, VerificationError
from kit.signing.dsse import Envelope, Signature, decode_envelope, pae
from kit.signing.keyring import (
    MANIFEST_NAME,
    MANIFEST_PAYLOAD_TYPE,
    MANIFEST_SIGNATURE_NAME,
    MAX_MANIFEST_SIGNATURE_BYTES,
    PUBLIC_KEY_SUFFIX,
    Keyring,
    KeyringManifest,
    KeyStatus,
    ManifestEntry,
    format_utc,
    load_keyring,
    parse_manifest,
    read_manifest_bytes,
)
from kit.signing.keys import KEYID, keyid_of, load_public_key
from kit.strict_json import loads_strict

ROOTS_CONFIG = "roots.yaml"
#: Root public keys are small; a roots directory holding more is not one.
MAX_ROOT_KEY_BYTES = 16 << 10


def default_roots_dir() -> Path:
    """The kit checkout's pinned roots: ``signing/roots``."""
    return paths.kit_home() / "signing" / "roots"


@dataclass(frozen=True)
class TrustRoots:
    directory: Path
    keys: tuple[tuple[str, Ed25519PublicKey], ...]
    threshold: int

    def find(self, keyid: str) -> Ed25519PublicKey | None:
        return next((key for root_keyid, key in self.keys if root_keyid == keyid), None)


@dataclass(frozen=True)
class TrustedKeyring:
    directory: Path
    manifest: KeyringManifest
    #: Every key file in the directory, listed or not (keyids recomputed).
    keyring: Keyring
    roots: TrustRoots
    #: The distinct roots whose signatures over keyring.json verified.
    root_signers: tuple[str, ...]

    def entry(self, keyid: str) -> ManifestEntry | None:
        return self.manifest.find(keyid)

    def standing_problem(self, keyid: str) -> str | None:
        """Why ``keyid`` may never vouch, whatever the vendor or date (unlisted, revoked)."""
        entry = self.manifest.find(keyid)
        if entry is None:
            filed = self.keyring.find(keyid)
            where = f"is filed as {filed.path} but" if filed else "is"
            return f"key {keyid[:16]} {where} not listed in the signed {MANIFEST_NAME}"
        if entry.status is KeyStatus.REVOKED:
            return (
                f"key {keyid[:16]} of vendor {entry.vendor} was revoked at "
                f"{format_utc(entry.changed_at or entry.not_before)} ({entry.reason}); "
                "it is refused whatever the report's date"
            )
        return None

    def key_problem(self, keyid: str, vendor: str, signed_at: dt.datetime) -> str | None:
        """None when ``keyid`` may vouch for ``vendor`` at ``signed_at``, else one line why.

        A naive ``signed_at`` is taken as UTC.
        """
        problem = self.standing_problem(keyid)
        entry = self.manifest.find(keyid)
        if problem is not None or entry is None:  # standing_problem names unlisted keys
            return problem
        if entry.vendor != vendor:
            return f"key {keyid[:16]} is listed for vendor {entry.vendor}, not {vendor}"
        return _window_problem(entry, _as_utc(signed_at))

    def unlisted_key_files(self) -> tuple[Path, ...]:
        """Key files in the directory that the manifest does not list (they are not trusted)."""
        return tuple(e.path for e in self.keyring.entries if self.manifest.find(e.keyid) is None)


def _as_utc(moment: dt.datetime) -> dt.datetime:
    return moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment


def _window_problem(entry: ManifestEntry, signed_at: dt.datetime) -> str | None:
    named = f"key {entry.keyid[:16]} of vendor {entry.vendor}"
    when = format_utc(signed_at)
    if signed_at < entry.not_before:
        return f"report signed at {when}, before {named} is valid ({format_utc(entry.not_before)})"
    if signed_at > entry.not_after:
        return f"report signed at {when}, after {named} expired ({format_utc(entry.not_after)})"
    if entry.status is KeyStatus.RETIRED and entry.changed_at and signed_at >= entry.changed_at:
        return (
            f"report signed at {when}, after {named} was retired "
            f"({format_utc(entry.changed_at)})"
        )
    return None


# Roots ---------------------------------------------------------------------------------------


def _load_root_key(path: Path) -> tuple[str, Ed25519PublicKey]:
    try:
        key = load_public_key(read_regular_file(path, limit=MAX_ROOT_KEY_BYTES, what="root"), path)
    except InputError as exc:
        raise VerificationError(f"bad trust root: {exc}") from None
    keyid = keyid_of(key)
    if path.name != f"{keyid}{PUBLIC_KEY_SUFFIX}":
        raise VerificationError(f"trust root {path} is not named after its keyid {keyid[:16]}")
    return keyid, key


def _read_threshold(path: Path, root_count: int) -> int:
    config = Node.read(path).section(("threshold",), what="a mapping with the key threshold")
    node = config["threshold"]
    threshold = node.integer(minimum=1, what="a whole number of root signatures")
    if threshold > root_count:
        raise node.error(f"{threshold} exceeds the {root_count} root key(s) beside it")
    return threshold


def _threshold(roots_dir: Path, root_count: int) -> int:
    """How many roots must sign (``roots.yaml``'s ``threshold``, default 1)."""
    path = roots_dir / ROOTS_CONFIG
    if not path.exists():
        return 1
    try:
        return _read_threshold(path, root_count)
    except InputError as exc:
        raise VerificationError(f"bad trust roots: {exc}") from None


def load_roots(roots_dir: Path) -> TrustRoots:
    """The pinned root keys of ``roots_dir`` and how many must sign; ``VerificationError``."""
    if not roots_dir.is_dir():
        raise VerificationError(f"trust roots directory {roots_dir} does not exist")
    files = sorted(p for p in roots_dir.iterdir() if p.name.endswith(PUBLIC_KEY_SUFFIX))
    keys = tuple(_load_root_key(path) for path in files)
    if not keys:
        raise VerificationError(f"no trust roots (<keyid>{PUBLIC_KEY_SUFFIX}) in {roots_dir}")
    return TrustRoots(roots_dir, keys, _threshold(roots_dir, len(keys)))


# The manifest's signatures --------------------------------------------------------------------


def _read_signature_envelope(keyring_dir: Path) -> Envelope:
    path = keyring_dir / MANIFEST_SIGNATURE_NAME
    try:
        data = read_regular_file(
            path, limit=MAX_MANIFEST_SIGNATURE_BYTES, what="keyring signature"
        )
    except FileMissing:
        raise VerificationError(
            f"{MANIFEST_SIGNATURE_NAME} is missing from {keyring_dir}: "
            f"{MANIFEST_NAME} is not signed by a trust root"
        ) from None
    except InputError as exc:
        raise VerificationError(str(exc)) from None
    try:
        return decode_envelope(loads_strict(data, what=MANIFEST_SIGNATURE_NAME))
    except VerificationError as exc:
        raise VerificationError(f"{MANIFEST_SIGNATURE_NAME}: {exc}") from None


def _non_root_signer(signature: Signature, roots: TrustRoots, keyring: Keyring) -> str:
    named = signature.keyid[:16] if KEYID.fullmatch(signature.keyid) else "with a bad keyid"
    vendor_key = keyring.find(signature.keyid)
    what = f", a key of vendor {vendor_key.vendor}," if vendor_key else ""
    return (
        f"{MANIFEST_SIGNATURE_NAME} is signed by key {named}{what} which is not a trust root "
        f"in {roots.directory}"
    )


def _check_signature(
    signature: Signature, message: bytes, roots: TrustRoots, keyring: Keyring
) -> None:
    root = roots.find(signature.keyid)
    if root is None:
        raise VerificationError(_non_root_signer(signature, roots, keyring))
    try:
        root.verify(signature.sig, message)
    except InvalidSignature:
        raise VerificationError(
            f"{MANIFEST_SIGNATURE_NAME}: the signature of root {signature.keyid[:16]} does not "
            f"verify over {MANIFEST_NAME}"
        ) from None


def check_manifest_signatures(
    data: bytes, envelope: Envelope, roots: TrustRoots, keyring: Keyring
) -> tuple[str, ...]:
    """The distinct roots that signed ``data``; refused unless ``roots.threshold`` of them did."""
    if envelope.payload_type != MANIFEST_PAYLOAD_TYPE:
        raise VerificationError(
            f"{MANIFEST_SIGNATURE_NAME} has payloadType {envelope.payload_type[:60]!r}, "
            f"not {MANIFEST_PAYLOAD_TYPE}"
        )
    if envelope.payload != data:
        raise VerificationError(
            f"{MANIFEST_NAME} changed after it was signed: {MANIFEST_SIGNATURE_NAME} covers "
            "other bytes (a root must sign it again)"
        )
    message = pae(envelope.payload_type, envelope.payload)
    signers: list[str] = []
    for signature in envelope.signatures:
        if signature.keyid in signers:
            raise VerificationError(
                f"root {signature.keyid[:16]} signs {MANIFEST_NAME} twice; the threshold counts "
                "distinct roots"
            )
        _check_signature(signature, message, roots, keyring)
        signers.append(signature.keyid)
    if len(signers) < roots.threshold:
        raise VerificationError(
            f"{MANIFEST_NAME} has {len(signers)} root signature(s); the roots in "
            f"{roots.directory} need {roots.threshold}"
        )
    return tuple(signers)


# Loading ---------------------------------------------------------------------------------------


def _refuse_roots_inside(roots_dir: Path, keyring_dir: Path) -> None:
    if roots_dir.resolve().is_relative_to(keyring_dir.resolve()):
        raise VerificationError(
            f"trust roots {roots_dir} lie inside the keyring {keyring_dir} they would vouch for; "
            "pin roots outside it"
        )


def _read_manifest(keyring_dir: Path) -> bytes:
    try:
        return read_manifest_bytes(keyring_dir)
    except FileMissing:
        raise VerificationError(
            f"keyring {keyring_dir} has no {MANIFEST_NAME}: no key in it is vouched for by a root"
        ) from None
    except InputError as exc:
        raise VerificationError(str(exc)) from None


def _all_key_files(keyring_dir: Path) -> Keyring:
    try:
        return load_keyring(keyring_dir)
    except InputError as exc:
        raise VerificationError(f"bad keyring: {exc}") from None


def _require_key_files(manifest: KeyringManifest, keyring: Keyring) -> None:
    for entry in manifest.entries:
        filed = keyring.find(entry.keyid)
        if filed is None or filed.vendor != entry.vendor:
            raise VerificationError(
                f"{MANIFEST_NAME} lists key {entry.keyid[:16]} of vendor {entry.vendor} but its "
                f"file {entry.vendor}/{entry.keyid}{PUBLIC_KEY_SUFFIX} is missing"
            )


def load_trusted_keyring(keyring_dir: Path, roots_dir: Path | None = None) -> TrustedKeyring:
    """Check keyring.json's root signatures and entries; ``VerificationError`` (one line)."""
    roots_dir = roots_dir if roots_dir is not None else default_roots_dir()
    _refuse_roots_inside(roots_dir, keyring_dir)
    roots = load_roots(roots_dir)
    keyring = _all_key_files(keyring_dir)
    data = _read_manifest(keyring_dir)
    signers = check_manifest_signatures(data, _read_signature_envelope(keyring_dir), roots, keyring)
    manifest = parse_manifest(data)  # only signed bytes are parsed
    _require_key_files(manifest, keyring)
    return TrustedKeyring(keyring_dir, manifest, keyring, roots, signers)
