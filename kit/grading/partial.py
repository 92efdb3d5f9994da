"""A narrowed run's qualifier: ``partial``, and the grade its own tests earn.

A run narrowed by --tier, --select or --rerun-failed does not cover the standard, so its grade
is never conformant (its ``incomplete-run`` violation sees to that). That grade alone would read
as a failure when every test it ran passed; the qualifier says what the run is, and the grade
its tests earn (the same grading without the narrowing's violation) says how they did. Both are
derived from the report, never stored, so reports of every standard carry them alike.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kit.grading.evidence import collect_evidence
from kit.grading.grading import grade_run
from kit.grading.policy import INCOMPLETE_RUN
from kit.results import TestRecord
from kit.standard import Standard

PARTIAL = "partial"


@dataclass(frozen=True)
class Partial:
    #: The grade the report carries (never conformant: the run is narrowed).
    grade: str
    #: The grade its tests earn, the narrowing aside.
    earned: str

    @property
    def only_narrowed(self) -> bool:
        """Whether the narrowing alone kept the run from a better grade."""
        return self.earned != self.grade

    def words(self) -> str:
        earned = (f"the tests it ran meet {self.earned}" if self.only_narrowed
                  else f"the tests it ran are {self.earned} too")
        return f"{self.grade} ({PARTIAL}: {earned}; only a complete run is graded conformant)"


def partial_of(standard: Standard, report: Mapping[str, Any],
               records: Sequence[TestRecord] | None = None) -> Partial | None:
    """None for a complete run; else its grade and the grade its tests earn (``records``: the
    report's records already typed, else typed here)."""
    if report["run"].get("complete") is True:
        return None
    evidence = collect_evidence(standard, report, records)
    kept = tuple(v for v in evidence.violations if v.get("kind") != INCOMPLETE_RUN)
    earned = grade_run(standard, dataclasses.replace(evidence, violations=kept))["name"]
    return Partial(str(report["grade"]["name"]), str(earned))
