"""A run's tests that met another release than the one its standard was locked on (a canary):
those not in the installed release and those that ran on other inputs, for ``ckit show`` and
the pull-request comment, which list them apart from the vendor's results."""

from __future__ import annotations

from dataclasses import dataclass

from kit.report.id_order import in_natural_order
from kit.report.model import Report
from kit.results import INPUTS_CHANGED_KEY, NA_REASON_KEY, NotApplicableReason, Status


@dataclass(frozen=True)
class ReleaseDrift:
    #: NOT_APPLICABLE ``not-in-release``: the installed torch generates no such sample.
    not_in_release: tuple[str, ...]
    #: Ran on inputs other than those the standard locked (``details.inputs_changed``).
    inputs_changed: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.not_in_release or self.inputs_changed)

    def to_json(self) -> dict[str, list[str]]:
        return {"not_in_release": list(self.not_in_release),
                "inputs_changed": list(self.inputs_changed)}


def release_drift(report: Report) -> ReleaseDrift:
    absent = in_natural_order(
        r.id for r in report.records if r.status is Status.NOT_APPLICABLE
        and r.details.get(NA_REASON_KEY) == NotApplicableReason.NOT_IN_RELEASE
    )
    changed = in_natural_order(r.id for r in report.records if r.details.get(INPUTS_CHANGED_KEY))
    return ReleaseDrift(tuple(absent), tuple(changed))


def drift_words(drift: ReleaseDrift, standard: str) -> str:
    """One sentence: how many of the standard's tests the release lacks or changed."""
    return (f"{len(drift.not_in_release)} tests of standard {standard} are not in this release "
            f"(not applicable, not-in-release) and {len(drift.inputs_changed)} ran on other "
            "inputs than the standard locked (details.inputs_changed)")
