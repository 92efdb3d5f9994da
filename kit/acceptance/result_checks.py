"""Acceptance checks on what the run found: vendor, grade, age and the skip policy."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from kit.errors import InputError
from kit.grading.policy import EXPIRED_SKIP
from kit.paths import VENDOR_ID
from kit.report.model import Report
from kit.standard import load_standard
from kit.vendors import SkipEntry
from kit.verification.content import KitStanding

#: A tracking link: what the skip-manifest schema asks of an entry's ``tracking``.
TRACKING_LINK = re.compile(r"https?://\S+")
#: How many skip-policy problems a reason names before it says "and N more".
LISTED = 3


@dataclass(frozen=True)
class VendorCheck:
    """The report is the named vendor's (in the shared repository: its submission path's)."""

    vendor: str
    name: ClassVar[str] = "vendor"

    def __post_init__(self) -> None:
        if not VENDOR_ID.fullmatch(self.vendor):
            raise InputError(f"vendor {self.vendor!r} is not a vendor id ({VENDOR_ID.pattern})")

    def describe(self) -> str:
        return f"the report is vendor {self.vendor}'s"

    def check(self, report: Report, standing: KitStanding, now: dt.datetime) -> str | None:
        if report.vendor_id == self.vendor:
            return None
        return f"the report is vendor {report.vendor_id}'s, not {self.vendor}'s"


def _days(count: int) -> str:
    return f"{count} day" if count == 1 else f"{count} days"


def grade_order(standard_version: str | None = None) -> tuple[str, ...]:
    """The standard's grade names, best first, as grading tries them (default: the kit's
    current standard)."""
    return tuple(grade.name for grade in load_standard(standard_version).grades)


@dataclass(frozen=True)
class MinGradeCheck:
    """The report's grade is ``grade`` or better, in the standard's order of grades."""

    grade: str
    #: The standard's grade names, best first (``grade_order``).
    order: tuple[str, ...]
    name: ClassVar[str] = "min-grade"

    def __post_init__(self) -> None:
        if self.grade not in self.order:
            raise InputError(
                f"no grade named {self.grade!r}; the grades, best first: {', '.join(self.order)}"
            )

    def describe(self) -> str:
        return f"the grade is {self.grade} or better"

    def check(self, report: Report, standing: KitStanding, now: dt.datetime) -> str | None:
        claimed = report.grade.name
        if claimed not in self.order:
            return f"grade {claimed} is none of the grades {', '.join(self.order)}"
        if self.order.index(claimed) <= self.order.index(self.grade):
            return None
        return f"grade {claimed} is below {self.grade}"


@dataclass(frozen=True)
class MaxAgeCheck:
    """The run finished at most ``days`` days before now."""

    days: int
    name: ClassVar[str] = "max-age"

    def __post_init__(self) -> None:
        if isinstance(self.days, bool) or not isinstance(self.days, int) or self.days < 0:
            raise InputError(f"max age {self.days!r}: expected a whole number of days, 0 or more")

    def describe(self) -> str:
        return f"the run finished at most {_days(self.days)} ago"

    def check(self, report: Report, standing: KitStanding, now: dt.datetime) -> str | None:
        finished = report.run.finished_at
        age = now - finished
        if age <= dt.timedelta(days=self.days):
            return None
        verb = "is" if self.days == 1 else "are"
        return (
            f"the run finished on {finished.date()}, {_days(age.days)} before "
            f"{now.date()}; at most {_days(self.days)} {verb} accepted"
        )


def _entry_problems(entry: SkipEntry, today: dt.date, expired_listed: bool) -> Iterable[str]:
    where = f"skip entry {entry.test!r}"
    if not entry.reason.strip():
        yield f"{where} has no reason"
    if not TRACKING_LINK.fullmatch(entry.tracking):
        yield f"{where} has no tracking link"
    if entry.is_expired(today) and not expired_listed:
        yield f"{where} expired on {entry.expires} (the run judged {today})"


def _listed(problems: list[str]) -> str:
    shown = "; ".join(problems[:LISTED])
    rest = len(problems) - LISTED
    return f"{shown}; and {rest} more" if rest > 0 else shown


@dataclass(frozen=True)
class SkipPolicyCheck:
    """No skip-policy violation, and every skip entry justified and unexpired at the run date."""

    name: ClassVar[str] = "skip-policy"

    def describe(self) -> str:
        return (
            "no skip-policy violation; every skip entry has a reason and a tracking link and "
            "had not expired at the run date"
        )

    def check(self, report: Report, standing: KitStanding, now: dt.datetime) -> str | None:
        problems = [violation["message"] for violation in report.violations]
        # An expired entry is a violation of a consistent report already: say it once.
        listed = {v.get("entry") for v in report.violations if v["kind"] == EXPIRED_SKIP}
        for entry in report.skips.entries:
            problems.extend(_entry_problems(entry, report.run.today, entry.test in listed))
        if not problems:
            return None
        noun = "problem" if len(problems) == 1 else "problems"
        return f"{len(problems)} {noun}: {_listed(problems)}"
