"""The keyring: which public key belongs to which vendor, and the manifest that vouches for them.

Layout: ``<keyring>/<vendor-id>/<keyid>.pub.pem``. The file name is a claim, not a fact: loading
recomputes every keyid from the key itself and refuses a file whose name disagrees, and refuses a
key filed under two vendors, because a key must vouch for exactly one vendor's reports.

Beside the vendor directories, ``keyring.json`` lists the keys a verifier may trust (vendor,
keyid, validity window, status) and ``keyring.json.sig`` holds root signatures over its exact
bytes. This module reads, edits and signs the manifest; ``kit.signing.trust`` decides whether
its signatures hold and what each entry allows.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from kit import paths
from kit.bounded_read import FileMissing, read_regular_file
from kit.errors import InputError, VerificationError
from kit.json_shape import exact_object
from kit.paths import VENDOR_ID
from kit.signing.dsse import Envelope, Signature, decode_envelope, pae
from kit.signing.keys import KEYID, keyid_of, load_public_key, public_key_pem, write_atomically
from kit.strict_json import loads_strict

PUBLIC_KEY_SUFFIX = ".pub.pem"


@dataclass(frozen=True)
class KeyringEntry:
    vendor: str
    keyid: str
    public_key: Ed25519PublicKey
    path: Path


@dataclass(frozen=True)
class Keyring:
    directory: Path
    entries: tuple[KeyringEntry, ...]

    def find(self, keyid: str) -> KeyringEntry | None:
        return next((entry for entry in self.entries if entry.keyid == keyid), None)

    def vendors(self) -> tuple[str, ...]:
        return tuple(sorted({entry.vendor for entry in self.entries}))


def default_keyring_dir() -> Path:
    return paths.keyring_dir()


def public_key_path(keyring_dir: Path, vendor_id: str, keyid: str) -> Path:
    return keyring_dir / vendor_id / f"{keyid}{PUBLIC_KEY_SUFFIX}"


def add_public_key(keyring_dir: Path, vendor_id: str, public_key: Ed25519PublicKey) -> Path:
    """File ``public_key`` under ``vendor_id``; returns the new file's path."""
    path = public_key_path(keyring_dir, vendor_id, keyid_of(public_key))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, public_key_pem(public_key), mode=0o644)
    return path


def _is_ignored(path: Path) -> bool:
    return path.name.startswith(".")  # .gitkeep, editor swap files


def _load_entry(path: Path, vendor_id: str) -> KeyringEntry:
    if not path.is_file() or not path.name.endswith(PUBLIC_KEY_SUFFIX):
        expected = f"<keyid>{PUBLIC_KEY_SUFFIX}"
        raise InputError(f"{path}: unexpected entry in keyring (expected {expected})")
    named_keyid = path.name.removesuffix(PUBLIC_KEY_SUFFIX)
    if not KEYID.fullmatch(named_keyid):
        raise InputError(f"{path}: file name is not a keyid (64 lower-case hex digits)")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read public key: {exc.strerror}") from None
    public_key = load_public_key(data, path)
    actual_keyid = keyid_of(public_key)
    if actual_keyid != named_keyid:
        raise InputError(
            f"{path}: file name claims keyid {named_keyid[:16]} but the key's keyid is "
            f"{actual_keyid[:16]}"
        )
    return KeyringEntry(vendor=vendor_id, keyid=actual_keyid, public_key=public_key, path=path)


def _load_vendor_dir(vendor_dir: Path) -> list[KeyringEntry]:
    if not VENDOR_ID.fullmatch(vendor_dir.name):
        raise InputError(f"{vendor_dir}: keyring directory name is not a valid vendor id")
    return [
        _load_entry(path, vendor_dir.name)
        for path in sorted(vendor_dir.iterdir())
        if not _is_ignored(path)
    ]


def _refuse_shared_keys(entries: list[KeyringEntry]) -> None:
    owner: dict[str, str] = {}
    for entry in entries:
        other = owner.setdefault(entry.keyid, entry.vendor)
        if other != entry.vendor:
            raise InputError(
                f"keyring {entry.path.parent.parent}: key {entry.keyid[:16]} is filed under "
                f"vendors {other} and {entry.vendor}; a key binds to one vendor"
            )


def load_keyring(directory: Path | None = None) -> Keyring:
    """Load and check every key; a missing directory is an empty keyring."""
    directory = directory if directory is not None else default_keyring_dir()
    entries: list[KeyringEntry] = []
    if directory.is_dir():
        for child in sorted(directory.iterdir()):
            # Plain files beside the vendor directories (a README) are not keys.
            if child.is_dir() and not _is_ignored(child):
                entries.extend(_load_vendor_dir(child))
    elif directory.exists():
        raise InputError(f"{directory}: keyring is not a directory")
    _refuse_shared_keys(entries)
    return Keyring(directory=directory, entries=tuple(entries))


# The signed manifest --------------------------------------------------------------------------
#
# ``keyring.json`` says which of the key files above are trusted, for which vendor, when, and in
# what standing; ``keyring.json.sig`` (a DSSE envelope over its exact bytes) is what makes it
# count. ``kit.signing.trust`` checks the signature against pinned root keys; this part only
# reads, checks the shape of, edits and signs the manifest.

MANIFEST_NAME = "keyring.json"
MANIFEST_SIGNATURE_NAME = "keyring.json.sig"
MANIFEST_PAYLOAD_TYPE = "application/vnd.ckit.keyring+json"
#: keyring.json's ``version`` counts its signed editions: every first root signature over new
#: content raises it by one, so an auditor can refuse an older, validly signed keyring (one that
#: still lists a key revoked since) restored in its place.
FIRST_MANIFEST_VERSION = 1
MAX_MANIFEST_VERSION = 2**53 - 1  # exact in every JSON reader
#: A manifest lists a few keys per vendor; these bound what a hostile one may cost.
MAX_MANIFEST_BYTES = 4 << 20
#: keyring.json.sig carries the manifest again, in base64, beside its signatures.
MAX_MANIFEST_SIGNATURE_BYTES = 2 * MAX_MANIFEST_BYTES
MAX_MANIFEST_ENTRIES = 4096
MAX_REASON_CHARS = 300

_MANIFEST_FIELDS = frozenset({"version", "keys"})
#: Optional: a manifest without vendor identities keeps the shape (and bytes) it always had.
_OPTIONAL_MANIFEST_FIELDS = frozenset({"vendors"})
_IDENTITY_FIELDS = frozenset({"vendor", "name", "contact", "docs_url"})
MAX_IDENTITY_CHARS = 200
_ENTRY_FIELDS = frozenset(
    {"vendor", "keyid", "not_before", "not_after", "status", "changed_at", "reason"}
)


class KeyStatus(enum.StrEnum):
    ACTIVE = "active"
    RETIRED = "retired"
    REVOKED = "revoked"


def format_utc(moment: dt.datetime) -> str:
    """``2026-11-23T14:06:25Z``: the one way the manifest writes a time."""
    return moment.astimezone(dt.UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_utc(text: Any, where: str) -> dt.datetime:
    """An ISO 8601 time with a zero UTC offset (``Z`` or ``+00:00``); anything else is refused."""
    if not isinstance(text, str):
        raise VerificationError(f"{where} must be a UTC time such as 2026-01-31T00:00:00Z")
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise VerificationError(f"{where} {text[:40]!r} is not an ISO 8601 time") from None
    if moment.utcoffset() != dt.timedelta(0):
        raise VerificationError(f"{where} {text[:40]!r} is not in UTC (end it with Z)")
    return moment


@dataclass(frozen=True)
class ManifestEntry:
    vendor: str
    keyid: str
    not_before: dt.datetime
    not_after: dt.datetime
    status: KeyStatus
    #: When the key was retired or revoked; None while active.
    changed_at: dt.datetime | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "vendor": self.vendor,
            "keyid": self.keyid,
            "not_before": format_utc(self.not_before),
            "not_after": format_utc(self.not_after),
            "status": self.status.value,
            "changed_at": format_utc(self.changed_at) if self.changed_at else None,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class VendorIdentity:
    """Who a vendor id is, as the roots vouch for it: what pages show, never a report's text."""

    vendor: str
    name: str
    contact: str
    #: An https:// link to the vendor's instructions for reproducing its results.
    docs_url: str

    def to_json(self) -> dict[str, Any]:
        return {
            "vendor": self.vendor,
            "name": self.name,
            "contact": self.contact,
            "docs_url": self.docs_url,
        }


@dataclass(frozen=True)
class KeyringManifest:
    entries: tuple[ManifestEntry, ...] = ()
    #: The edition: raised by ``sign_manifest`` whenever roots start signing new content.
    version: int = FIRST_MANIFEST_VERSION
    #: Each vendor's identity, one per vendor id, sorted by it.
    identities: tuple[VendorIdentity, ...] = ()

    def find(self, keyid: str) -> ManifestEntry | None:
        return next((entry for entry in self.entries if entry.keyid == keyid), None)

    def identity(self, vendor: str) -> VendorIdentity | None:
        return next((item for item in self.identities if item.vendor == vendor), None)

    def to_bytes(self) -> bytes:
        document: dict[str, Any] = {
            "version": self.version,
            "keys": [entry.to_json() for entry in self.entries],
        }
        if self.identities:
            document["vendors"] = [identity.to_json() for identity in self.identities]
        return (json.dumps(document, indent=2) + "\n").encode("utf-8")


def _entry_str(fields: dict[str, Any], key: str, pattern: re.Pattern[str], where: str) -> str:
    value = fields[key]
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise VerificationError(f"{where} {key} {str(value)[:40]!r} is not valid")
    return value


def _reason(value: Any, status: KeyStatus, where: str) -> str | None:
    if value is None and status is not KeyStatus.REVOKED:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_REASON_CHARS:
        raise VerificationError(
            f"{where} reason must be a non-empty string of at most {MAX_REASON_CHARS} characters"
            + (" (a revocation says why)" if status is KeyStatus.REVOKED else "")
        )
    return value


def _changed_at(value: Any, status: KeyStatus, where: str) -> dt.datetime | None:
    if status is KeyStatus.ACTIVE:
        if value is not None:
            raise VerificationError(f"{where} is active, so its changed_at must be null")
        return None
    return parse_utc(value, f"{where} changed_at")


def _parse_entry(value: Any, index: int) -> ManifestEntry:
    where = f"keyring.json entry {index}"
    fields = exact_object(value, _ENTRY_FIELDS, where)
    vendor = _entry_str(fields, "vendor", VENDOR_ID, where)
    keyid = _entry_str(fields, "keyid", KEYID, where)
    try:
        status = KeyStatus(fields["status"])
    except ValueError:
        raise VerificationError(
            f"{where} status {str(fields['status'])[:20]!r} is not active, retired or revoked"
        ) from None
    entry = ManifestEntry(
        vendor=vendor,
        keyid=keyid,
        not_before=parse_utc(fields["not_before"], f"{where} not_before"),
        not_after=parse_utc(fields["not_after"], f"{where} not_after"),
        status=status,
        changed_at=_changed_at(fields["changed_at"], status, where),
        reason=_reason(fields["reason"], status, where),
    )
    if entry.not_before >= entry.not_after:
        raise VerificationError(f"{where} not_before is not earlier than its not_after")
    return entry


def _refuse_duplicate_entries(entries: tuple[ManifestEntry, ...]) -> None:
    first_index: dict[str, int] = {}
    for index, entry in enumerate(entries):
        earlier = first_index.setdefault(entry.keyid, index)
        if earlier != index:
            raise VerificationError(
                f"keyring.json lists key {entry.keyid[:16]} twice (entries {earlier} and "
                f"{index}); a key has one entry"
            )


def _identity_text(fields: dict[str, Any], key: str, where: str) -> str:
    value = fields[key]
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_IDENTITY_CHARS \
            or not value.isprintable():
        raise VerificationError(
            f"{where} {key} must be printable text of 1 to {MAX_IDENTITY_CHARS} characters"
        )
    return value


def _parse_identity(value: Any, index: int) -> VendorIdentity:
    where = f"keyring.json vendor {index}"
    fields = exact_object(value, _IDENTITY_FIELDS, where)
    docs_url = _identity_text(fields, "docs_url", where)
    if not docs_url.startswith("https://"):
        raise VerificationError(f"{where} docs_url must be an https:// link")
    return VendorIdentity(
        vendor=_entry_str(fields, "vendor", VENDOR_ID, where),
        name=_identity_text(fields, "name", where),
        contact=_identity_text(fields, "contact", where),
        docs_url=docs_url,
    )


def _parse_identities(value: Any) -> tuple[VendorIdentity, ...]:
    if not isinstance(value, list) or len(value) > MAX_MANIFEST_ENTRIES:
        raise VerificationError(
            f"keyring.json field 'vendors' must be a list of at most {MAX_MANIFEST_ENTRIES}"
        )
    identities = tuple(_parse_identity(item, index) for index, item in enumerate(value))
    vendors = [identity.vendor for identity in identities]
    if vendors != sorted(set(vendors)):
        raise VerificationError("keyring.json lists vendors unsorted or one twice")
    return identities


def parse_manifest(data: bytes) -> KeyringManifest:
    """Check ``keyring.json``'s exact shape; ``VerificationError`` with one line otherwise."""
    document = loads_strict(data, what=MANIFEST_NAME)
    present = document.keys() if isinstance(document, dict) else set()
    optional = _OPTIONAL_MANIFEST_FIELDS & present
    fields = exact_object(document, _MANIFEST_FIELDS | optional, MANIFEST_NAME)
    version = fields["version"]
    if not isinstance(version, int) or isinstance(version, bool) or not (
        FIRST_MANIFEST_VERSION <= version <= MAX_MANIFEST_VERSION
    ):
        raise VerificationError("keyring.json version must be a positive integer")
    keys = fields["keys"]
    if not isinstance(keys, list):
        raise VerificationError("keyring.json field 'keys' must be a list")
    if len(keys) > MAX_MANIFEST_ENTRIES:
        raise VerificationError(f"keyring.json lists more than {MAX_MANIFEST_ENTRIES} keys")
    entries = tuple(_parse_entry(item, index) for index, item in enumerate(keys))
    _refuse_duplicate_entries(entries)
    identities = _parse_identities(fields["vendors"]) if "vendors" in fields else ()
    return KeyringManifest(entries=entries, version=version, identities=identities)


def read_manifest_bytes(keyring_dir: Path) -> bytes:
    """keyring.json's bytes (regular file, bounded); ``FileMissing`` when there is none."""
    path = keyring_dir / MANIFEST_NAME
    return read_regular_file(path, limit=MAX_MANIFEST_BYTES, what="keyring manifest")


# Editing, for the keyring's maintainers (``ckit keys add|retire|revoke|sign-keyring``) --------


def load_manifest_for_edit(keyring_dir: Path) -> KeyringManifest:
    """The manifest to change; none yet is an empty one. Problems are the maintainer's input."""
    try:
        return parse_manifest(read_manifest_bytes(keyring_dir))
    except FileMissing:
        return KeyringManifest()
    except VerificationError as exc:
        raise InputError(f"{keyring_dir / MANIFEST_NAME}: {exc}") from None


def write_manifest(keyring_dir: Path, manifest: KeyringManifest) -> int:
    """Write keyring.json; drop keyring.json.sig, whose signatures no longer cover it.

    Returns how many signatures were dropped.
    """
    keyring_dir.mkdir(parents=True, exist_ok=True)
    signature_path = keyring_dir / MANIFEST_SIGNATURE_NAME
    dropped = _signatures_in_file(signature_path)
    if signature_path.exists() or signature_path.is_symlink():
        signature_path.unlink()
    write_atomically(keyring_dir / MANIFEST_NAME, manifest.to_bytes(), mode=0o644)
    return dropped


def read_manifest_signatures(keyring_dir: Path) -> tuple[Signature, ...]:
    """The signatures keyring.json.sig holds over the current keyring.json (none if stale)."""
    try:
        envelope = decode_envelope(
            loads_strict(
                read_regular_file(
                    keyring_dir / MANIFEST_SIGNATURE_NAME,
                    limit=MAX_MANIFEST_SIGNATURE_BYTES,
                    what="keyring signature",
                )
            )
        )
        current = read_manifest_bytes(keyring_dir)
    except (InputError, VerificationError):
        return ()
    if envelope.payload_type != MANIFEST_PAYLOAD_TYPE or envelope.payload != current:
        return ()
    return envelope.signatures


def with_entry(manifest: KeyringManifest, entry: ManifestEntry) -> KeyringManifest:
    listed = manifest.find(entry.keyid)
    if listed is not None:
        raise InputError(
            f"key {entry.keyid[:16]} is already listed (vendor {listed.vendor}, "
            f"{listed.status.value}); a key has one entry"
        )
    return dataclasses.replace(manifest, entries=(*manifest.entries, entry))


def with_identity(manifest: KeyringManifest, identity: VendorIdentity) -> KeyringManifest:
    """``identity`` set for its vendor (replacing the one before), the list kept sorted."""
    try:  # the maintainer's input meets the reader's rules
        _parse_identity(identity.to_json(), 0)
    except VerificationError as exc:
        raise InputError(str(exc).replace("keyring.json vendor 0", identity.vendor)) from None
    others = [item for item in manifest.identities if item.vendor != identity.vendor]
    identities = tuple(sorted((*others, identity), key=lambda item: item.vendor))
    return dataclasses.replace(manifest, identities=identities)


def with_status(
    manifest: KeyringManifest,
    keyid: str,
    status: KeyStatus,
    at: dt.datetime,
    reason: str | None,
) -> KeyringManifest:
    """``keyid``'s entry retired or revoked at ``at``; revocation is final, retiring is once."""
    entry = manifest.find(keyid)
    if entry is None:
        raise InputError(f"key {keyid[:16]} is not listed in keyring.json")
    if entry.status is KeyStatus.REVOKED:
        raise InputError(f"key {keyid[:16]} is already revoked; revocation is final")
    if entry.status is status:
        raise InputError(f"key {keyid[:16]} is already {status.value}")
    changed = dataclasses.replace(entry, status=status, changed_at=at, reason=reason)
    entries = tuple(changed if e is entry else e for e in manifest.entries)
    return dataclasses.replace(manifest, entries=entries)


@dataclass(frozen=True)
class ManifestSigning:
    """What ``sign_manifest`` did: the signatures keyring.json.sig now holds, the stale ones it
    dropped, and the edition they sign."""

    signatures: int
    dropped: int
    version: int


def _next_edition(keyring_dir: Path, manifest: KeyringManifest) -> bytes:
    """Raise keyring.json's version by one and write it: roots start signing new content."""
    if manifest.version >= MAX_MANIFEST_VERSION:
        raise InputError(f"{keyring_dir / MANIFEST_NAME}: version cannot be raised further")
    data = dataclasses.replace(manifest, version=manifest.version + 1).to_bytes()
    write_atomically(keyring_dir / MANIFEST_NAME, data, mode=0o644)
    return data


def sign_manifest(keyring_dir: Path, private_key: Ed25519PrivateKey) -> ManifestSigning:
    """Add one root signature over keyring.json. The first root to sign new content (no
    signature covers it yet) raises its version first; later roots sign that same edition."""
    try:
        data = read_manifest_bytes(keyring_dir)
    except FileMissing:
        raise InputError(f"{keyring_dir}: no {MANIFEST_NAME} to sign; add keys first") from None
    manifest = load_manifest_for_edit(keyring_dir)  # a malformed manifest is never signed
    signature_path = keyring_dir / MANIFEST_SIGNATURE_NAME
    kept = read_manifest_signatures(keyring_dir)
    dropped = _signatures_in_file(signature_path) - len(kept)
    keyid = keyid_of(private_key.public_key())
    if any(signature.keyid == keyid for signature in kept):
        raise InputError(f"root key {keyid[:16]} has already signed this keyring.json")
    if not kept:
        data = _next_edition(keyring_dir, manifest)
    signature = private_key.sign(pae(MANIFEST_PAYLOAD_TYPE, data))
    envelope = Envelope(MANIFEST_PAYLOAD_TYPE, data, (*kept, Signature(keyid, signature)))
    write_atomically(signature_path, envelope.to_bytes(), mode=0o644)
    version = manifest.version + (0 if kept else 1)
    return ManifestSigning(len(envelope.signatures), dropped, version)


def _signatures_in_file(signature_path: Path) -> int:
    """How many signatures the file holds, whatever they cover (0 when unreadable)."""
    try:
        data = read_regular_file(
            signature_path, limit=MAX_MANIFEST_SIGNATURE_BYTES, what="keyring signature"
        )
        return len(decode_envelope(loads_strict(data)).signatures)
    except (InputError, VerificationError):
        return 0
