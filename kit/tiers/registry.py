"""The one list of tiers, in report order. Everything that enumerates tiers reads it.

Adding a tier is one module implementing ``kit.tiers.interface.Tier`` plus the standard's entries
for it (its locked list, timeout and required tests); ``register_tier`` adds one at run time (a
test's extra tier, say).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kit.errors import InputError
from kit.test_ids import TestId
from kit.tiers.compile.tier import CompileTier
from kit.tiers.deploy.tier import DeployTier
from kit.tiers.distributed.tier import DistributedTier
from kit.tiers.flows.tier import FlowsTier
from kit.tiers.interface import Tier
from kit.tiers.models.tier import ModelsTier
from kit.tiers.unit.tier import UnitTier

if TYPE_CHECKING:
    from kit.outcomes import Inapplicable
    from kit.standard import Standard
    from kit.vendors import VendorProfile

#: The kit's own tiers, in report order.
_BUILT_IN: tuple[Tier, ...] = (
    DeployTier(), UnitTier(), ModelsTier(), FlowsTier(), DistributedTier(), CompileTier(),
)
_TIERS: dict[str, Tier] = {t.name: t for t in _BUILT_IN}


def all_tiers() -> tuple[Tier, ...]:
    return tuple(_TIERS.values())


def tier_names() -> tuple[str, ...]:
    """Every tier's name, in report order."""
    return tuple(_TIERS)


def complete_run_tiers(standard: Standard | None = None) -> tuple[str, ...]:
    """The tiers a complete run covers, which ``ckit run`` runs by default; under ``standard``,
    those of them it carries (``Standard.carries``)."""
    return tuple(t.name for t in _TIERS.values()
                 if t.in_complete_run and (standard is None or standard.carries(t.name)))


def get_tier(name: str) -> Tier:
    try:
        return _TIERS[name]
    except KeyError:
        raise InputError(f"unknown tier {name!r} (tiers: {', '.join(_TIERS)})") from None


def parse_test_id(text: str) -> TestId:
    """``text`` as a test id of a registered tier; a one-line ``InputError`` when it is not."""
    return TestId.parse(text, tuple(_TIERS))


def find_tier(test_id: str) -> Tier | None:
    """The tier a test id names, or None for an id of no known tier (or no id at all)."""
    parsed = TestId.read(test_id, tuple(_TIERS))
    return _TIERS[parsed.tier] if parsed is not None else None


def tier_order(name: str) -> int:
    """A tier's place in report order; unknown names sort after every tier."""
    names = tier_names()
    return names.index(name) if name in names else len(names)


def register_tier(tier: Tier) -> None:
    """Add a tier after the built-in ones (refused when its name is taken)."""
    if tier.name in _TIERS:
        raise InputError(f"tier {tier.name!r} is already registered")
    _TIERS[tier.name] = tier


def unregister_tier(name: str) -> None:
    """Remove a tier ``register_tier`` added; built-in tiers stay."""
    if any(t.name == name for t in _BUILT_IN):
        raise InputError(f"tier {name!r} is built in")
    _TIERS.pop(name, None)


def kit_inapplicable(
    standard: Standard, vendor: VendorProfile, test_id: str
) -> Inapplicable | None:
    """Why ``test_id`` does not apply to ``vendor`` (the kit's decision), or None when it must
    run."""
    tier = find_tier(test_id)
    return tier.inapplicable(standard, vendor, test_id) if tier is not None else None


def op_and_dtype(test_id: str) -> tuple[str, str] | None:
    """The op and dtype a test id names (``unit/opinfo/add/float32/0``: add, float32), or None."""
    tier = find_tier(test_id)
    return tier.op_and_dtype(test_id) if tier is not None else None
