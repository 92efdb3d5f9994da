"""Keys and the keyring: key ids, encrypted PEM, where private keys may live, keyring checks."""

from __future__ import annotations

import hashlib
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from kit import paths
from kit.errors import InputError
from kit.signing.keyring import add_public_key, load_keyring
from kit.signing.keys import (
    default_key_path,
    generate_private_key,
    keyid_of,
    load_private_key,
    private_key_pem,
    public_key_pem,
    read_passphrase_file,
    write_private_key,
)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_keyid_is_sha256_of_the_der_subject_public_key_info() -> None:
    key = generate_private_key().public_key()
    # An Ed25519 SPKI is a fixed 12-byte ASN.1 prefix followed by the 32 raw key bytes.
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    der = bytes.fromhex("302a300506032b6570032100") + raw
    assert keyid_of(key) == hashlib.sha256(der).hexdigest()


def test_keyid_survives_a_pem_round_trip() -> None:
    key = generate_private_key().public_key()
    reloaded = serialization.load_pem_public_key(public_key_pem(key))
    assert keyid_of(reloaded) == keyid_of(key)  # type: ignore[arg-type]


def test_unencrypted_key_round_trip(tmp_path: Path) -> None:
    key = generate_private_key()
    path = tmp_path / "keys" / "acme.pem"
    write_private_key(path, private_key_pem(key, None), force=False)
    assert keyid_of(load_private_key(path, None).public_key()) == keyid_of(key.public_key())
    assert _mode(path) == 0o600


def test_encrypted_key_round_trip(tmp_path: Path) -> None:
    key = generate_private_key()
    path = tmp_path / "acme.pem"
    write_private_key(path, private_key_pem(key, b"correct horse"), force=False)
    assert b"ENCRYPTED PRIVATE KEY" in path.read_bytes()
    loaded = load_private_key(path, b"correct horse")
    assert keyid_of(loaded.public_key()) == keyid_of(key.public_key())


def test_encrypted_key_with_wrong_passphrase(tmp_path: Path) -> None:
    path = tmp_path / "acme.pem"
    write_private_key(path, private_key_pem(generate_private_key(), b"right"), force=False)
    with pytest.raises(InputError, match="wrong passphrase"):
        load_private_key(path, b"wrong")


def test_encrypted_key_without_passphrase_says_how_to_give_one(tmp_path: Path) -> None:
    path = tmp_path / "acme.pem"
    write_private_key(path, private_key_pem(generate_private_key(), b"right"), force=False)
    with pytest.raises(InputError, match="encrypted; set CKIT_KEY_PASSPHRASE or pass"):
        load_private_key(path, None)


def test_a_passphrase_does_not_break_an_unencrypted_key(tmp_path: Path) -> None:
    path = tmp_path / "acme.pem"
    write_private_key(path, private_key_pem(generate_private_key(), None), force=False)
    load_private_key(path, b"set for some other key")


def test_non_ed25519_private_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ec.pem"
    path.write_bytes(
        ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    with pytest.raises(InputError, match="not an Ed25519 private key"):
        load_private_key(path, None)


def test_refuses_to_write_a_private_key_inside_the_repository() -> None:
    target = paths.kit_home() / "signing" / "keyring" / "acme" / "stray-private.pem"
    with pytest.raises(InputError, match="refusing to write a private key inside the kit"):
        write_private_key(target, private_key_pem(generate_private_key(), None), force=True)
    assert not target.exists()


def test_refuses_a_symlink_that_leads_into_the_repository(tmp_path: Path) -> None:
    link = tmp_path / "innocent-looking"
    link.symlink_to(paths.kit_home(), target_is_directory=True)
    pem = private_key_pem(generate_private_key(), None)
    with pytest.raises(InputError, match="inside the kit checkout"):
        write_private_key(link / "acme.pem", pem, force=True)
    assert not (paths.kit_home() / "acme.pem").exists()


def test_refuses_to_overwrite_a_private_key_without_force(tmp_path: Path) -> None:
    path = tmp_path / "acme.pem"
    first = private_key_pem(generate_private_key(), None)
    write_private_key(path, first, force=False)
    with pytest.raises(InputError, match="already exists; pass --force"):
        write_private_key(path, private_key_pem(generate_private_key(), None), force=False)
    assert path.read_bytes() == first
    write_private_key(path, private_key_pem(generate_private_key(), None), force=True)
    assert path.read_bytes() != first


def test_default_key_path_is_in_the_user_config_dir(private_config: Path) -> None:
    assert default_key_path("acme") == private_config / "ckit" / "keys" / "acme.pem"


def test_default_key_path_honours_ckit_signing_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CKIT_SIGNING_KEY", str(tmp_path / "ci" / "signing.pem"))
    assert default_key_path("acme") == tmp_path / "ci" / "signing.pem"


@pytest.mark.parametrize("vendor", ["../escape", "Acme", "a", "acme/../../x", ""])
def test_default_key_path_refuses_vendor_ids_that_are_not_file_names(vendor: str) -> None:
    with pytest.raises(InputError, match="invalid vendor id"):
        default_key_path(vendor)


def test_new_private_directories_are_700(private_config: Path) -> None:
    path = default_key_path("acme")
    write_private_key(path, private_key_pem(generate_private_key(), None), force=False)
    assert _mode(path) == 0o600
    assert _mode(path.parent) == 0o700
    assert _mode(private_config) == 0o700  # created by us, so private too


def test_passphrase_file_drops_the_trailing_newline(tmp_path: Path) -> None:
    path = tmp_path / "pass"
    path.write_bytes(b"s3cret\n")
    assert read_passphrase_file(path) == b"s3cret"
    path.write_bytes(b"\n")
    with pytest.raises(InputError, match="passphrase file is empty"):
        read_passphrase_file(path)


def test_keyring_loads_entries_with_recomputed_keyids(tmp_path: Path) -> None:
    keyring_dir = tmp_path / "keyring"
    acme = generate_private_key().public_key()
    beta = generate_private_key().public_key()
    add_public_key(keyring_dir, "acme", acme)
    add_public_key(keyring_dir, "beta", beta)
    (keyring_dir / "README.md").write_text("public keys only\n")
    (keyring_dir / "acme" / ".gitkeep").write_text("")
    keyring = load_keyring(keyring_dir)
    assert keyring.vendors() == ("acme", "beta")
    entry = keyring.find(keyid_of(beta))
    assert entry is not None and entry.vendor == "beta"
    assert entry.path == keyring_dir / "beta" / f"{keyid_of(beta)}.pub.pem"
    assert keyring.find("0" * 64) is None


def test_missing_keyring_directory_is_an_empty_keyring(tmp_path: Path) -> None:
    assert load_keyring(tmp_path / "nowhere").entries == ()


def test_keyring_refuses_a_file_named_after_another_keyid(tmp_path: Path) -> None:
    keyring_dir = tmp_path / "keyring"
    path = add_public_key(keyring_dir, "acme", generate_private_key().public_key())
    path.rename(path.with_name(f"{'ab' * 32}.pub.pem"))
    with pytest.raises(InputError, match="file name claims keyid abababababababab but the key"):
        load_keyring(keyring_dir)


def test_keyring_refuses_one_key_under_two_vendors(tmp_path: Path) -> None:
    keyring_dir = tmp_path / "keyring"
    key = generate_private_key().public_key()
    add_public_key(keyring_dir, "acme", key)
    add_public_key(keyring_dir, "beta", key)
    with pytest.raises(InputError, match="filed under vendors acme and beta"):
        load_keyring(keyring_dir)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("notes.txt", b"hello", "unexpected entry in keyring"),
        ("not-a-keyid.pub.pem", b"", "file name is not a keyid"),
        (f"{'cd' * 32}.pub.pem", b"garbage", "not a PEM public key"),
    ],
    ids=["stray_file", "name_not_a_keyid", "not_pem"],
)
def test_keyring_refuses_malformed_entries(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    vendor_dir = tmp_path / "keyring" / "acme"
    vendor_dir.mkdir(parents=True)
    (vendor_dir / name).write_bytes(content)
    with pytest.raises(InputError, match=message):
        load_keyring(tmp_path / "keyring")


def test_keyring_refuses_a_non_ed25519_public_key(tmp_path: Path) -> None:
    ec_public = ec.generate_private_key(ec.SECP256R1()).public_key()
    der = ec_public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    pem = ec_public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    vendor_dir = tmp_path / "keyring" / "acme"
    vendor_dir.mkdir(parents=True)
    (vendor_dir / f"{hashlib.sha256(der).hexdigest()}.pub.pem").write_bytes(pem)
    with pytest.raises(InputError, match="not an Ed25519 public key"):
        load_keyring(tmp_path / "keyring")


def test_keyring_refuses_a_vendor_directory_that_is_not_a_vendor_id(tmp_path: Path) -> None:
    (tmp_path / "keyring" / "Not_A_Vendor").mkdir(parents=True)
    with pytest.raises(InputError, match="not a valid vendor id"):
        load_keyring(tmp_path / "keyring")
