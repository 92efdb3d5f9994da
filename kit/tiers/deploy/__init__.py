"""The deploy tier: is the vendor stack installed and usable, before any op is judged?

Its tests run even when the device is unusable (the plugin skips other tiers then): reporting
that, with the reason, is what ``deploy/device-visible`` is for.
"""

from __future__ import annotations

#: The stable ids of the deploy tier, in the order they run.
DEPLOY_TEST_IDS = (
    "deploy/imports",
    "deploy/torch-pinned",
    "deploy/pip-check",
    "deploy/device-visible",
    "deploy/smoke-op",
    "deploy/export-run",
)


class DeployCheckFailed(AssertionError):
    """A deploy check found the stack broken; the message says how."""


def all_test_ids(standard: object = None) -> list[str]:
    """The tier's ids for ``ckit standard lock`` (sorted, like every locked list)."""
    return sorted(DEPLOY_TEST_IDS)
