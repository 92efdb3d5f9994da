"""The time one test gets on the device: one rule, read by the run that enforces it (the
orchestrator kills a worker silent past it) and by a tier that plans within it (the distributed
tier's rank deadlines), so the two never disagree."""

from __future__ import annotations

from collections.abc import Mapping

#: A tier the standard gives no time limit: the kit's own default, in seconds.
DEFAULT_TIMEOUT_S = 300.0


def device_limit_s(timeouts: Mapping[str, float], tier: str, override: float | None = None
                   ) -> float:
    """The seconds one test of ``tier`` gets on the device: ``ckit run --timeout``
    (``override``) where the run gives one, shorter or longer, else the standard's limit for
    the tier (``timeouts``), else ``DEFAULT_TIMEOUT_S``."""
    if override is not None:
        return override
    return timeouts.get(tier, DEFAULT_TIMEOUT_S)
