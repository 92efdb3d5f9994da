"""What a tier test needs to know about the run: the standard, the vendor and its device."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kit.applicability import flow_inapplicable, unclaimed_autocast
from kit.device import DeviceInfo
from kit.numerics.criteria import Tolerance
from kit.outcomes import not_applicable
from kit.results import NotApplicableReason
from kit.standard import Standard
from kit.standard.limits import device_limit_s
from kit.vendors import SkipManifest, VendorProfile


@dataclass(frozen=True)
class KitContext:
    standard: Standard
    vendor: VendorProfile
    skips: SkipManifest
    #: None when the device is not usable; ``device_problem`` then says why in one line.
    device_info: DeviceInfo | None
    today: dt.date
    device_problem: str | None = None
    #: Facts the running test records for its report even when it passes (numerics figures),
    #: and, noted before it failed, when it fails (``details.dispatch``); the plugin empties it
    #: before each test.
    notes: dict[str, Any] = field(default_factory=dict)
    #: Under ``ckit run``: where the device half of a test leaves its evidence for the kit's
    #: judge (``kit.execution``); None: judge in this process (plain pytest).
    evidence_path: Path | None = None
    #: ``ckit run --timeout``: the run's time per test in place of the standard's limits.
    timeout_s: float | None = None

    @property
    def device(self) -> str:
        """The torch device string tests move tensors and modules to."""
        return self.vendor.device_type

    def limit_s(self, tier: str) -> float:
        """The time a test of ``tier`` gets before the run kills its worker (the run's
        ``--timeout`` else the standard's limit): what a tier that names what hung plans within."""
        return device_limit_s(self.standard.timeouts, tier, self.timeout_s)

    def tolerance(self, dtype: str) -> Tolerance:
        return self.standard.tolerance(dtype)

    def require_dtype(self, dtype: str) -> None:
        """End the test as NOT_APPLICABLE when the vendor does not claim ``dtype``."""
        if not self.vendor.claims_dtype(dtype):
            not_applicable(
                NotApplicableReason.UNCLAIMED_DTYPE,
                f"vendor {self.vendor.id} does not claim dtype {dtype}",
            )

    def require_autocast(self, dtype: str) -> None:
        """End the test as NOT_APPLICABLE when the vendor claims no autocast in ``dtype``."""
        unclaimed = unclaimed_autocast(self.vendor, dtype)
        if unclaimed is not None:
            not_applicable(unclaimed.reason, unclaimed.words)

    def require_flow(self, flow: str) -> None:
        """End the test as NOT_APPLICABLE when the vendor does not claim ``flow`` or its
        packages are absent."""
        found = flow_inapplicable(self.vendor, flow)
        if found is not None:
            not_applicable(found.reason, found.words)
