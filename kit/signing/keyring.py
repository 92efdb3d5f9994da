"""The keyring: which public key belongs to which vendor.

Layout: ``<keyring>/<vendor-id>/<keyid>.pub.pem``. The file name is a claim, not a fact: loading
recomputes every keyid from the key itself and refuses a file whose name disagrees, and refuses a
key filed under two vendors, because a key must vouch for exactly one vendor's reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from kit import paths
from kit.errors import InputError
from kit.signing.keys import (
    KEYID,
    VENDOR_ID,
    keyid_of,
    load_public_key,
    public_key_pem,
    write_atomically,
)

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
