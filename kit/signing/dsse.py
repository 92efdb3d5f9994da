"""DSSE envelopes: ``{payloadType, payload, signatures: [{keyid, sig}]}``.

Signatures cover the pre-authentication encoding (PAE) of the payload type and the raw payload
bytes, so the type cannot be swapped and the payload is never re-serialised before verification.
Decoding is strict: exactly these fields, these types, canonical padded base64, and at most
``MAX_SIGNATURES`` signatures.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from kit.errors import VerificationError
from kit.json_shape import exact_object
from kit.signing.limits import MAX_SIGNATURES

_ENVELOPE_FIELDS = frozenset({"payloadType", "payload", "signatures"})
_SIGNATURE_FIELDS = frozenset({"keyid", "sig"})


@dataclass(frozen=True)
class Signature:
    keyid: str
    sig: bytes


@dataclass(frozen=True)
class Envelope:
    payload_type: str
    payload: bytes
    signatures: tuple[Signature, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "payloadType": self.payload_type,
            "payload": b64encode(self.payload),
            "signatures": [{"keyid": s.keyid, "sig": b64encode(s.sig)} for s in self.signatures],
        }

    def to_bytes(self) -> bytes:
        """The envelope as written to disk (layout is free: only the payload bytes are signed)."""
        return (json.dumps(self.to_json(), indent=2) + "\n").encode("utf-8")


def pae(payload_type: str, payload: bytes) -> bytes:
    """``"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body``, lengths in ASCII decimal bytes."""
    type_bytes = payload_type.encode("utf-8")
    return b" ".join(
        [b"DSSEv1", b"%d" % len(type_bytes), type_bytes, b"%d" % len(payload), payload]
    )


def b64encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def b64decode_strict(text: str, field: str) -> bytes:
    """Standard alphabet, padded, and re-encoding to the same text (no ignored trailing bits)."""
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise VerificationError(f"envelope field {field} is not valid base64") from None
    if b64encode(data) != text:
        raise VerificationError(f"envelope field {field} is not canonical base64")
    return data


def _require_str(obj: dict[str, Any], key: str, where: str) -> str:
    value = obj[key]
    if not isinstance(value, str) or not value:
        raise VerificationError(f"{where} field {key!r} must be a non-empty string")
    return value


def _decode_signature(obj: Any, index: int) -> Signature:
    where = f"signatures[{index}]"
    fields = exact_object(obj, _SIGNATURE_FIELDS, where)
    keyid = _require_str(fields, "keyid", where)
    sig = b64decode_strict(_require_str(fields, "sig", where), f"{where}.sig")
    return Signature(keyid=keyid, sig=sig)


def decode_envelope(obj: Any) -> Envelope:
    """Check the exact DSSE shape of a parsed envelope; raise ``VerificationError`` otherwise."""
    fields = exact_object(obj, _ENVELOPE_FIELDS, "envelope")
    payload_type = _require_str(fields, "payloadType", "envelope")
    payload = b64decode_strict(_require_str(fields, "payload", "envelope"), "payload")
    raw_signatures = fields["signatures"]
    if not isinstance(raw_signatures, list):
        raise VerificationError("envelope field 'signatures' must be a list")
    if len(raw_signatures) > MAX_SIGNATURES:
        # Counted before any is decoded: the work on a hostile envelope stays small.
        raise VerificationError(
            f"envelope has {len(raw_signatures)} signatures; at most {MAX_SIGNATURES} are accepted"
        )
    signatures = tuple(_decode_signature(item, i) for i, item in enumerate(raw_signatures))
    return Envelope(payload_type=payload_type, payload=payload, signatures=signatures)
