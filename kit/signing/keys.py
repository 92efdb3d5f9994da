"""Ed25519 signing keys: generation, PEM files, key ids and where private keys live.

A private key never lives in the repository: it is written under the user's config directory
(or ``$CKIT_SIGNING_KEY``) with mode 600, and writing one under the kit's checkout is refused.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from kit import paths
from kit.errors import InputError
from kit.hashing import sha256_bytes
from kit.paths import VENDOR_ID

KEY_ENV = "CKIT_SIGNING_KEY"
PASSPHRASE_ENV = "CKIT_KEY_PASSPHRASE"
KEYID = re.compile(r"[0-9a-f]{64}")


def check_vendor_id(vendor_id: str) -> str:
    if not VENDOR_ID.fullmatch(vendor_id):
        raise InputError(
            f"invalid vendor id {vendor_id!r}: expected lower-case letters, digits and '-', "
            "starting with a letter, 2-32 characters"
        )
    return vendor_id


def keyid_of(public_key: Ed25519PublicKey) -> str:
    """sha256 hex of the DER SubjectPublicKeyInfo: names the key, whatever file holds it."""
    der = public_key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return sha256_bytes(der)


def generate_private_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def public_key_pem(public_key: Ed25519PublicKey) -> bytes:
    return public_key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def private_key_pem(private_key: Ed25519PrivateKey, passphrase: bytes | None) -> bytes:
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(passphrase)
        if passphrase
        else serialization.NoEncryption()
    )
    return private_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
    )


def default_key_path(vendor_id: str) -> Path:
    """``$CKIT_SIGNING_KEY`` if set, else ``<user config>/ckit/keys/<vendor>.pem``."""
    override = os.environ.get(KEY_ENV)
    if override:
        return Path(override).expanduser()
    return paths.user_config_dir() / "keys" / f"{check_vendor_id(vendor_id)}.pem"


def passphrase_from_env() -> bytes | None:
    value = os.environ.get(PASSPHRASE_ENV)
    return value.encode("utf-8") if value else None


def read_passphrase_file(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read passphrase file: {exc.strerror}") from None
    passphrase = data.rstrip(b"\r\n")
    if not passphrase:
        raise InputError(f"{path}: passphrase file is empty")
    return passphrase


def load_private_key(path: Path, passphrase: bytes | None) -> Ed25519PrivateKey:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: private key not found") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read private key: {exc.strerror}") from None
    if passphrase is not None and b"ENCRYPTED PRIVATE KEY" not in data:
        passphrase = None  # a passphrase set for other keys must not break an unencrypted one
    try:
        key = serialization.load_pem_private_key(data, password=passphrase)
    except TypeError:
        raise InputError(
            f"{path}: private key is encrypted; set {PASSPHRASE_ENV} or pass --passphrase-file"
        ) from None
    except ValueError:
        raise InputError(f"{path}: not a PEM private key, or wrong passphrase") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise InputError(f"{path}: not an Ed25519 private key")
    return key


def load_public_key(data: bytes, source: Path) -> Ed25519PublicKey:
    if b"PRIVATE KEY" in data:
        raise InputError(f"{source}: holds a PRIVATE key; only public keys belong in a keyring")
    try:
        key = serialization.load_pem_public_key(data)
    except ValueError:
        raise InputError(f"{source}: not a PEM public key") from None
    if not isinstance(key, Ed25519PublicKey):
        raise InputError(f"{source}: not an Ed25519 public key")
    return key


def refuse_inside_repository(path: Path) -> None:
    home = paths.kit_home().resolve()
    if path.resolve().is_relative_to(home):
        raise InputError(
            f"refusing to write a private key inside the kit checkout ({home}): {path}; "
            f"use the default location or set {KEY_ENV} to a path outside it"
        )


def _make_private_dirs(directory: Path) -> None:
    """Create missing directories one by one so each new one (not only the last) is 700."""
    missing = [d for d in (directory, *directory.parents) if not d.exists()]
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)
        path.chmod(0o700)  # mkdir's mode is masked by umask


def check_private_key_target(path: Path, *, force: bool) -> None:
    """Fail before any work (or passphrase prompt) if ``path`` may not receive a private key."""
    refuse_inside_repository(path)
    if path.exists() and not force:
        raise InputError(f"{path}: a private key already exists; pass --force to replace it")


def write_private_key(path: Path, pem: bytes, *, force: bool) -> None:
    """Write ``pem`` with mode 600; never inside the repo, never over a key unless ``force``."""
    check_private_key_target(path, force=force)
    _make_private_dirs(path.parent)
    if path.parent == paths.user_config_dir() / "keys":
        path.parent.chmod(0o700)  # the shared default directory is ours to keep private
    write_atomically(path, pem, mode=0o600)


def write_atomically(path: Path, data: bytes, *, mode: int) -> None:
    """Temp file in the same directory, fsync, ``os.replace``: readers never see half a file."""
    fd, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        raise
