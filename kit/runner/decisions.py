"""The kit's own word on a test, never the vendor's: not applicable or skipped before any
worker sees it, and what a verdict carries besides (an expired skip entry, how to reproduce a
failure, a canary's test its torch release does not have)."""

from __future__ import annotations

from dataclasses import replace

from kit.outcomes import Inapplicable
from kit.results import NA_REASON_KEY, Status, TestRecord
from kit.runner.inputs import RunInputs
from kit.tiers.registry import find_tier, kit_inapplicable


def skipped_record(inputs: RunInputs, test_id: str) -> TestRecord | None:
    decision = inputs.skips.decide(test_id, inputs.today)
    if not decision.skip or decision.entry is None:
        return None
    return TestRecord(test_id, Status.SKIPPED, 0.0, decision.entry.describe(), decision.details)


def inapplicable_record(inputs: RunInputs, test_id: str) -> TestRecord | None:
    found = kit_inapplicable(inputs.standard, inputs.vendor, test_id)
    return None if found is None else inapplicable_of(test_id, found)


def inapplicable_of(test_id: str, found: Inapplicable) -> TestRecord:
    details = {"reason": found.words, NA_REASON_KEY: found.reason.value}
    return TestRecord(test_id, Status.NOT_APPLICABLE, 0.0, found.words, details)


def decided_by_kit(inputs: RunInputs, test_id: str) -> TestRecord | None:
    """A test the kit settles without running it: not applicable, or skipped by the
    vendor's manifest."""
    return inapplicable_record(inputs, test_id) or skipped_record(inputs, test_id)


def annotate(inputs: RunInputs, vendor: str, record: TestRecord) -> TestRecord:
    """A test matched by an expired entry ran anyway; a failing unit test says how to
    reproduce it (``vendor`` as the run names it); both go into its record. A canary's failing
    test its torch release does not generate is not applicable instead: no verdict."""
    decision = inputs.skips.decide(record.id, inputs.today)
    if decision.expired:
        record = replace(record, details={**record.details, **decision.details})
    tier = find_tier(record.id)
    if record.status.is_failure and tier is not None:
        absent = tier.absent_from_release(inputs.standard, record.id)
        if absent is not None:
            return inapplicable_of(record.id, absent)
        added = tier.failure_details(inputs.standard, record.id, vendor)
        record = replace(record, details={**record.details, **added})
    return record
