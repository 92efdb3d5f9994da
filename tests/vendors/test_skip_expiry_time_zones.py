"""Every date the kit judges is a UTC date (``kit.clock``), whatever ``TZ`` says.

A far-west zone (UTC-12) is a day behind UTC before noon UTC, a far-east one (UTC+14) a day
ahead from 10:00 UTC: between them every hour of the day has a zone whose local date is not
UTC's, so a kit judging local dates fails at least one of these tests at any hour.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import pytest
from vendors_helpers import skip_entry, skips_yaml, write_locked_standard, write_vendor

from kit.standard.catalogue import standard_directory

#: POSIX zone names count the other way: ``Etc/GMT+12`` is UTC-12.
FAR_WEST, FAR_EAST = "Etc/GMT+12", "Etc/GMT-14"
#: A test the skip entries below match, locked in the kit home the tests write.
LOCKED_ID = "unit/opinfo/add/bfloat16/sample0"


def utc_today() -> dt.date:
    return dt.datetime.now(dt.UTC).date()


def in_zone(zone: str, args: list[str], env: dict[str, str] | None = None) -> str:
    """``python args`` with ``TZ=zone``: its stdout and stderr."""
    if not Path("/usr/share/zoneinfo", zone).exists():
        pytest.skip(f"no time zone data for {zone}")
    done = subprocess.run([sys.executable, *args], env={**os.environ, **(env or {}), "TZ": zone},
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout + done.stderr


@pytest.mark.parametrize("zone", [FAR_WEST, FAR_EAST])
def test_a_run_in_a_far_time_zone_judges_skips_on_the_utc_date(zone: str) -> None:
    before = utc_today()
    said = in_zone(zone, ["-c", "from kit.clock import run_date; print(run_date(None).today)"])
    assert dt.date.fromisoformat(said.strip()) in {before, utc_today()}


def validate_skip_expiring(tmp_path: Path, zone: str, expires: dt.date) -> str:
    """``ckit vendors validate`` in ``zone`` of a vendor whose one skip entry expires then."""
    home = write_locked_standard(tmp_path / "home", standard_directory("v1") / "standard.yaml",
                                 [LOCKED_ID])
    entry = skip_entry("unit/opinfo/add/bfloat16/*", expires=expires.isoformat())
    write_vendor(tmp_path / "vendors", skips=skips_yaml(entry))
    env = {"CKIT_HOME": str(home), "CKIT_VENDORS_DIR": str(tmp_path / "vendors")}
    return in_zone(zone, ["-m", "kit", "vendors", "validate"], env)


def test_a_far_west_time_zone_cannot_keep_an_expired_skip_alive(tmp_path: Path) -> None:
    expired = utc_today() - dt.timedelta(days=1)
    said = validate_skip_expiring(tmp_path, FAR_WEST, expired)
    assert f"expired on {expired}" in said, said


def test_a_far_east_time_zone_cannot_expire_a_skip_a_day_early(tmp_path: Path) -> None:
    today = utc_today()
    said = validate_skip_expiring(tmp_path, FAR_EAST, today)
    if utc_today() == today:  # not across midnight UTC while it ran
        assert "expired on" not in said, said
