"""Signed reports: Ed25519 keys, a per-vendor keyring, DSSE envelopes over in-toto statements.

``sign_output_dir`` signs a run's four report files; ``verify_envelope`` checks an envelope
against the keyring step by step. Everything else here is the machinery behind those two.
"""

from kit.signing.keyring import Keyring, KeyringEntry, load_keyring
from kit.signing.sign import (
    ENVELOPE_NAME,
    REPORT_FILES,
    default_key_path,
    report_vendor_id,
    sign_output_dir,
    write_unsigned_envelope,
)
from kit.signing.verify import VerifiedReport, verify_envelope

__all__ = [
    "ENVELOPE_NAME",
    "REPORT_FILES",
    "Keyring",
    "KeyringEntry",
    "VerifiedReport",
    "default_key_path",
    "load_keyring",
    "report_vendor_id",
    "sign_output_dir",
    "verify_envelope",
    "write_unsigned_envelope",
]
