"""One wording of a run: the grade words every command that describes a run says.

``ckit run`` and ``ckit merge`` (their last line and ``--json``), ``ckit show``, summary.md, the
pull-request comment, the portal and the gate describe a run through ``run_wording``, so a
narrowed run (--tier, --select, --rerun-failed, a shard) is ``partial`` in every one of them:
never a bare "non-conformant" in one place and "partial" in another. The words are derived
from the report (``kit.grading.partial``), never stored in it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from kit.errors import KitError
from kit.grading.partial import PARTIAL, Partial, partial_of
from kit.report.model import Report
from kit.results import TestRecord
from kit.standard import load_standard

#: The mark of a run that only its narrowing kept from a better grade: neither the failing
#: grade's mark (its tests did not fail) nor the better grade's (it is no certificate).
PARTIAL_MARK = "◐"
#: What a canary run is called wherever it is described.
CANARY_WORDS = "canary run (not a certificate)"


class RunWordingJson(TypedDict):
    """``ckit run --json``'s grade fields (and ``ckit merge``'s)."""

    grade: str
    qualifier: str | None
    earned: str | None


@dataclass(frozen=True)
class RunWording:
    #: The grade the report carries.
    grade: str
    #: A narrowed run's qualifier and the grade its tests earn; None for a complete run.
    partial: Partial | None
    #: The standard's mark of ``grade`` ("" when the report's standard is not carried).
    grade_mark: str
    canary: bool = False

    @property
    def qualifier(self) -> str | None:
        return PARTIAL if self.partial is not None else None

    @property
    def earned(self) -> str:
        """The grade the run's own tests earn: the report's grade unless it is partial."""
        return self.partial.earned if self.partial is not None else self.grade

    @property
    def mark(self) -> str:
        """What precedes the grade in a title."""
        if self.partial is not None and self.partial.only_narrowed:
            return PARTIAL_MARK
        return self.grade_mark

    def words(self) -> str:
        """The grade in full: ``conformant``, or ``non-conformant (partial: the tests it ran
        meet conformant; only a complete run is graded conformant)``."""
        return self.partial.words() if self.partial is not None else self.grade

    @property
    def headline(self) -> str:
        """The grade in one word: ``partial`` where only the narrowing kept the run from a
        better grade, else the report's grade."""
        if self.partial is not None and self.partial.only_narrowed:
            return PARTIAL
        return self.grade

    @property
    def detail(self) -> str:
        """What the headline leaves out: ``its tests meet conformant``, ``partial`` or ""."""
        if self.partial is None:
            return ""
        if self.partial.only_narrowed:
            return f"its tests meet {self.partial.earned}"
        return PARTIAL

    def short(self) -> str:
        """The grade in a few words, for titles and table cells: ``conformant``,
        ``partial (its tests meet conformant)``, ``non-conformant (partial)``."""
        return f"{self.headline} ({self.detail})" if self.detail else self.headline

    def kind(self) -> str:
        """What the run is: ``canary run (not a certificate)``, ``partial run`` or ``run``."""
        if self.canary:
            return CANARY_WORDS
        return f"{PARTIAL} run" if self.partial is not None else "run"

    def to_json(self) -> RunWordingJson:
        partial = self.partial
        return {"grade": self.grade, "qualifier": self.qualifier,
                "earned": partial.earned if partial is not None else None}


def document_wording(document: Mapping[str, Any],
                     records: Sequence[TestRecord] | None = None) -> RunWording:
    """The wording of a report document (report.json, or a body's head and records);
    ``records``: its records already typed. A report whose standard this kit does not carry
    keeps its grade, unqualified and unmarked."""
    grade = str(document["grade"]["name"])
    canary = document["run"].get("canary") is True
    try:
        standard = load_standard(document["standard"]["version"])
        mark = standard.grade(grade).mark
        partial = partial_of(standard, document, records)
    except (KitError, KeyError):
        return RunWording(grade, None, "", canary)
    return RunWording(grade, partial, mark, canary)


def run_wording(report: Report) -> RunWording:
    """The wording of a typed report (its records as typed, not read again)."""
    return document_wording(report.document, report.records)
