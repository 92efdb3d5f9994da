"""``kit.outcomes.verdict_of``: the one mapping from how a test ended to its verdict, for the
plugin's phase reports, the worker's direct call and the judge alike."""

from __future__ import annotations

import pytest

from kit.outcomes import (
    DeviceUnusable,
    Inapplicable,
    KitDecision,
    KitSkip,
    ManifestSkip,
    SemanticMismatch,
    na_reason_of,
    verdict_of,
)
from kit.results import NA_REASON_KEY, NotApplicableReason, Status, Verdict

NOTES = {"dispatch": {"native": ["aten::add.Tensor"]}}
WORDS = "vendor acme does not claim dtype float64"


def test_nothing_raised_passes_with_what_the_test_noted() -> None:
    assert verdict_of(None, NOTES) == Verdict(Status.PASS, "", NOTES)


def test_a_failure_keeps_what_the_test_noted_under_its_own_details() -> None:
    verdict = verdict_of(SemanticMismatch("a copy", failure="not-a-view"), NOTES)
    assert verdict == Verdict(Status.FAIL_SEMANTIC, "SemanticMismatch: a copy",
                              {**NOTES, "failure": "not-a-view"})


@pytest.mark.parametrize(
    ("decision", "expected"),
    [
        (Inapplicable(NotApplicableReason.UNCLAIMED_DTYPE, WORDS),
         Verdict(Status.NOT_APPLICABLE, f"not applicable: {WORDS}",
                 {NA_REASON_KEY: "unclaimed-dtype", "reason": WORDS})),
        (ManifestSkip("skip manifest: gap (https://x, expires 2030-01-01)"),
         Verdict(Status.SKIPPED, "skip manifest: gap (https://x, expires 2030-01-01)",
                 {"reason": "skip manifest: gap (https://x, expires 2030-01-01)"})),
        (DeviceUnusable("no device"),
         Verdict(Status.NOT_APPLICABLE, "no device", {"reason": "no device"})),
    ],
    ids=["not-applicable", "manifest", "device-unusable"],
)
def test_the_kits_decision_is_read_by_type_and_drops_the_notes(decision: KitDecision,
                                                               expected: Verdict) -> None:
    assert verdict_of(KitSkip(decision), NOTES) == expected


def test_a_skip_in_the_kits_words_but_not_its_type_has_no_reason_code() -> None:
    """Vendor code may say "not applicable: " or "skip manifest: "; only the type counts."""
    for words in (f"not applicable: {WORDS}", "skip manifest: gap"):
        skip = pytest.skip.Exception(words)
        assert na_reason_of(skip) is None
        assert verdict_of(skip, NOTES) == Verdict(Status.NOT_APPLICABLE, words,
                                                  {"reason": words})
