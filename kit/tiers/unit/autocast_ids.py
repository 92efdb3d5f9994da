"""Which lower-precision dtype an ``autocast`` test runs in, read from its id alone (light: no
torch): ``unit/opinfo/mm/float32/autocast-bfloat16`` runs mm on float32 inputs under
``torch.autocast(dtype=torch.bfloat16)``, and applies only to a vendor claiming autocast in
bfloat16 (``kit.applicability.unclaimed_autocast``)."""

from __future__ import annotations

from kit.tiers.unit.unit_id import UnitId

#: The variant rule (and kind) of autocast tests.
AUTOCAST_RULE = "autocast"


def autocast_dtype(test_id: str) -> str | None:
    """The dtype an autocast test's last segment names, or None for any other test."""
    rule, lowered = UnitId.of(test_id).variant()
    return lowered if rule == AUTOCAST_RULE and lowered else None
