"""DSSE: the pre-authentication encoding and the strict envelope decoder."""

from __future__ import annotations

from typing import Any

import pytest

from kit.errors import VerificationError
from kit.signing.dsse import Envelope, Signature, b64encode, decode_envelope, pae


def test_pae_matches_the_dsse_spec_layout() -> None:
    assert pae("http://example.com/HelloWorld", b"hello world") == (
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )


def test_pae_counts_bytes_not_characters() -> None:
    assert pae("t/é", "ü".encode()) == b"DSSEv1 4 t/\xc3\xa9 2 \xc3\xbc"


def test_pae_of_empty_payload() -> None:
    assert pae("x", b"") == b"DSSEv1 1 x 0 "


def test_pae_separates_type_and_payload_unambiguously() -> None:
    # Moving a byte between the type and the payload must change the signed message.
    assert pae("ab", b"c") != pae("a", b"bc")


def _envelope_json() -> dict[str, Any]:
    envelope = Envelope("application/vnd.in-toto+json", b'{"x":1}', (Signature("k" * 64, b"s"),))
    return envelope.to_json()


def test_decode_round_trips_to_json() -> None:
    document = _envelope_json()
    envelope = decode_envelope(document)
    assert envelope.payload == b'{"x":1}'
    assert envelope.signatures == (Signature("k" * 64, b"s"),)
    assert envelope.to_json() == document


def _with(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    document = _envelope_json()
    target: Any = document
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return document


_DELETE = object()


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("payload",), _DELETE, "envelope lacks field 'payload'"),
        (("payloadType",), _DELETE, "envelope lacks field 'payloadType'"),
        (("extra",), 1, "envelope has unknown field 'extra'"),
        (("payloadType",), 7, "field 'payloadType' must be a non-empty string"),
        (("payloadType",), "", "field 'payloadType' must be a non-empty string"),
        (("payload",), "eyJ4Ijox fQ==", "payload is not valid base64"),
        (("payload",), "eyJ4IjoxfQ", "payload is not valid base64"),
        (("payload",), "eyJ4IjoxfR==", "payload is not canonical base64"),
        (("signatures",), {}, "'signatures' must be a list"),
        (("signatures", 0), "sig", "signatures[0] must be a JSON object"),
        (("signatures", 0, "keyid"), _DELETE, "signatures[0] lacks field 'keyid'"),
        (("signatures", 0, "cert"), "x", "signatures[0] has unknown field 'cert'"),
        (("signatures", 0, "sig"), "cw", "signatures[0].sig is not valid base64"),
        (("signatures", 0, "sig"), "c-==", "signatures[0].sig is not valid base64"),
        (("signatures", 0, "sig"), "", "field 'sig' must be a non-empty string"),
    ],
    ids=[
        "missing_payload",
        "missing_payload_type",
        "unknown_field",
        "payload_type_not_string",
        "payload_type_empty",
        "payload_with_whitespace",
        "payload_without_padding",
        "payload_with_nonzero_pad_bits",
        "signatures_not_list",
        "signature_not_object",
        "signature_without_keyid",
        "signature_unknown_field",
        "sig_without_padding",
        "sig_url_safe_alphabet",
        "sig_empty",
    ],
)
def test_decode_is_strict(path: tuple[Any, ...], value: Any, message: str) -> None:
    with pytest.raises(VerificationError) as caught:
        decode_envelope(_with(path, value))
    assert message in str(caught.value)


def test_decode_rejects_a_non_object() -> None:
    with pytest.raises(VerificationError, match="envelope must be a JSON object, got list"):
        decode_envelope([])


def test_b64encode_is_standard_padded() -> None:
    assert b64encode(b"\xfb\xff") == "+/8="
