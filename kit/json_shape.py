"""Exact-shape checks of a decoded JSON object, shared by the envelope, statement, keyring and
golden-manifest decoders; and the names of the two genuinely free-form JSON shapes (a record's
details, a mapping before validation)."""

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


#: A test record's ``details`` (``kit.results.TestRecord.details``): the facts a verdict carries,
#: which differ per tier, per status and per standard, so they are arbitrary JSON by design. The
#: one name for that free-form case; a producer whose facts have a fixed shape types them itself
#: (a TypedDict) and only what is merged into a record's details takes this alias.
RecordDetails = dict[str, Any]

#: A YAML or JSON mapping as parsed, before a reader has validated it into a typed value: what it
#: holds is whatever the file said.
ParsedMapping = dict[str, Any]
