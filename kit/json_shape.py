"""Exact-shape checks of a decoded JSON object, shared by the envelope, statement, keyring and
golden-manifest decoders."""

from __future__ import annotations

from typing import Any

from kit.errors import VerificationError


def exact_object(value: Any, expected: frozenset[str], where: str) -> dict[str, Any]:
    """``value`` as a dict with exactly the ``expected`` keys: no missing, no unknown fields.

    Unknown fields are refused, not ignored: a field the verifier skips is a field an attacker
    can use to make a consumer read something the verifier never judged.
    """
    if not isinstance(value, dict):
        raise VerificationError(f"{where} must be a JSON object, got {type(value).__name__}")
    missing = sorted(expected - value.keys())
    if missing:
        raise VerificationError(f"{where} lacks field {missing[0]!r}")
    unknown = sorted(value.keys() - expected)
    if unknown:
        raise VerificationError(f"{where} has unknown field {unknown[0]!r}")
    return value
