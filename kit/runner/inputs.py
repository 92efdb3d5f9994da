"""What a run judges by: the standard, the vendor's profile as the run claims it, its skip
manifest, the day, the plan; what must not change before a resume; the time each test gets."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from kit.flows.config import refuse_untested_claims
from kit.grading.environment import CONTAINER_ENV
from kit.hashing import kit_digest
from kit.results import tier_of
from kit.runner.config import RunConfig
from kit.runner.plan import Durations, Plan, make_plan
from kit.standard import Standard, load_standard
from kit.standard.limits import device_limit_s
from kit.vendors import SkipManifest, VendorProfile, load_skip_manifest, load_vendor
from kit.vendors.skip_limits import all_locked_ids, refuse_disallowed_entries


@dataclass(frozen=True)
class RunInputs:
    standard: Standard
    vendor: VendorProfile
    skips: SkipManifest
    today: dt.date
    #: The tests this run executes: the whole scope, or its shard's part.
    plan: Plan


def load_inputs(config: RunConfig) -> RunInputs:
    """What the run judges by; a skip manifest the standard does not allow stops it here."""
    vendor = claiming(load_vendor(config.vendor), config.flows)
    standard = load_standard()
    refuse_untested_claims(standard, vendor.flows)
    skips = load_skip_manifest(vendor.skip_manifest_path)
    refuse_disallowed_entries(skips, standard, all_locked_ids(standard))
    durations = Durations.load(Path(config.durations)) if config.durations else None
    plan = make_plan(standard, config.tiers, config.select, config.shard, durations)
    return RunInputs(standard=standard, vendor=vendor, skips=skips, today=config.clock.today,
                     plan=plan)


def claiming(vendor: VendorProfile, flows: tuple[str, ...] | None) -> VendorProfile:
    """The profile as this run claims it: ``--flows`` replaces the flows it claims (the report
    records them where the profile's would be)."""
    return vendor if flows is None else replace(vendor, flows=flows)


def pins_of(inputs: RunInputs) -> dict[str, str]:
    """What must not change between the start of a run and its resume."""
    return {
        "kit_digest": kit_digest(),
        "vendor_profile_sha256": inputs.vendor.digest(),
        "skip_manifest_sha256": inputs.skips.sha256,
        # A run begun inside a reference container must not be finished on the host.
        "environment": os.environ.get(CONTAINER_ENV, "host"),
        # A shard balanced on durations must keep its part: the same previous report.
        "durations_sha256": inputs.plan.durations_sha256 or "",
    }


def empty_plan_message(config: RunConfig) -> str:
    where = f" in shard {config.shard}" if config.shard is not None else ""
    return (f"no test{where} matches tiers {','.join(config.tiers)} "
            f"and --select {' '.join(config.select) or '(none)'}")


@dataclass(frozen=True)
class Deadlines:
    """The time a test gets: the vendor's to execute it, the kit's to judge it."""

    #: ``--timeout``, where the run narrowed or widened the standard's limits.
    timeout_s: float | None
    #: The standard's limit per tier.
    timeouts: Mapping[str, float]

    @classmethod
    def of(cls, config: RunConfig, inputs: RunInputs) -> Deadlines:
        return cls(config.timeout_s, inputs.standard.timeouts)

    def vendor(self, test_id: str) -> float:
        """The vendor's time for one test: ``--timeout``, else the standard's for its tier."""
        return device_limit_s(self.timeouts, tier_of(test_id), self.timeout_s)

    def standard(self, test_id: str) -> float:
        return device_limit_s(self.timeouts, tier_of(test_id))

    def judge(self, test_id: str) -> float:
        """The kit's own time to judge a test: never shorter than the standard's, since a
        ``--timeout`` narrowed for the vendor must not turn the kit's slow judging of a large
        test (a loaded machine, a 2^24-element reference) into an ERROR."""
        return max(self.vendor(test_id), self.standard(test_id))
