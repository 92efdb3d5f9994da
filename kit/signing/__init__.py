"""Signed reports: Ed25519 keys, a per-vendor keyring, DSSE envelopes over in-toto statements.

``sign_output_dir`` signs a run's report files; ``kit.verification`` checks what was signed.
"""

from kit.signing.keyring import Keyring, KeyringEntry, load_keyring
from kit.signing.sign import (
    default_key_path,
    report_vendor_id,
    sign_output_dir,
    write_unsigned_envelope,
)

__all__ = [
    "Keyring",
    "KeyringEntry",
    "default_key_path",
    "load_keyring",
    "report_vendor_id",
    "sign_output_dir",
    "write_unsigned_envelope",
]
