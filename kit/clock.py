"""The date a run judges skip-manifest expiry on: the system clock's, in UTC.

Every date the kit judges is a UTC date (``utc_today``), never the machine's local one: a skip
entry expires at the same moment wherever the run is, whatever ``TZ`` says.

``CKIT_TODAY`` (``ckit run``) and ``--ckit-today`` (plain pytest) set another date for the kit's
own tests. A report records both dates and that the clock was overridden, and such a report is
not certifiable: whoever sets the date decides which skips have expired.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from kit.errors import InputError

#: The environment variable that overrides the date of a ``ckit run``.
OVERRIDE_ENV = "CKIT_TODAY"


@dataclass(frozen=True)
class RunDate:
    #: What the system clock said when the run started (a UTC date).
    clock_today: dt.date
    #: The date set by ``CKIT_TODAY``; None when the clock decides.
    override: dt.date | None = None

    @property
    def today(self) -> dt.date:
        """The date skip-manifest expiry is judged on."""
        return self.override or self.clock_today

    @property
    def overridden(self) -> bool:
        return self.override is not None

    def to_json(self) -> dict[str, Any]:
        """The report's ``run`` fields: the date used, the clock's date, whether they may differ."""
        return {
            "today": self.today.isoformat(),
            "clock_today": self.clock_today.isoformat(),
            "clock_override": self.overridden,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunDate:
        overridden = data["clock_override"]
        if not isinstance(overridden, bool):
            raise ValueError(f"clock_override must be true or false, got {overridden!r}")
        clock_today, today = (dt.date.fromisoformat(data[k]) for k in ("clock_today", "today"))
        if not overridden and today != clock_today:
            raise ValueError(f"today {today} is not the clock's {clock_today}, yet not overridden")
        return cls(clock_today, today if overridden else None)


def utc_today() -> dt.date:
    """Today's date in UTC (``dt.date.today()`` is the local one, which ``TZ`` moves)."""
    return dt.datetime.now(dt.UTC).date()


def run_date(override: str | None, source: str = OVERRIDE_ENV) -> RunDate:
    """Today by the system clock (UTC), and the override ``source`` gave (empty or None: none)."""
    if not override:
        return RunDate(utc_today())
    try:
        return RunDate(utc_today(), dt.date.fromisoformat(override))
    except ValueError:
        raise InputError(f"{source}: expected a date YYYY-MM-DD, got {override!r}") from None
