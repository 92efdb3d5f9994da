"""What an acceptance check is: one condition a verified report must meet to be accepted."""

from __future__ import annotations

import datetime as dt
from typing import Protocol

from kit.report.model import Report
from kit.verification.content import KitStanding


class AcceptanceCheck(Protocol):
    """One condition of an acceptance policy.

    Checks read a report that passed verification (``kit.verification.verify``): its fields are
    consistent, but they are still the signer's words, so a reason quoting one is printed
    through ``kit.printable.printable``.
    """

    @property
    def name(self) -> str:
        """A short name for the check, such as ``released-kit``."""
        ...

    def describe(self) -> str:
        """What the check asks, in one line."""
        ...

    def check(self, report: Report, standing: KitStanding, now: dt.datetime) -> str | None:
        """None when ``report`` meets the condition; otherwise one line saying why not."""
        ...
