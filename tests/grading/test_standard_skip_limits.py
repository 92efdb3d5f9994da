"""The standard's limits on skipping and its clock condition: values, and one-line errors."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from kit.clock import RunDate, run_date
from kit.errors import InputError
from kit.standard import load_standard
from kit.standard.catalogue import standard_directory

#: These limits are v1's: a standard that extends it may set others.
V1 = standard_directory("v1")


def test_v1_limits():
    standard = load_standard(directory=V1)
    assert (standard.released, standard.max_skip_days) == (dt.date(2026, 11, 1), 180)
    assert standard.latest_skip_expiry == dt.date(2027, 4, 30)
    shares = {g.name: g.max_skipped_share for g in standard.grades}
    assert shares == {"conformant": 0.02, "conformant-with-exceptions": 0.05,
                      "non-conformant": 1.0, "not-certifiable": 1.0}
    # Only the catch-all grade takes a run whose date was not the clock's.
    assert [g.real_clock for g in standard.grades] == [True, True, True, False]


def edited_standard(tmp_path: Path, old: str, new: str) -> Path:
    text = (V1 / "standard.yaml").read_text(encoding="utf-8")
    assert old in text
    (tmp_path / "standard.yaml").write_text(text.replace(old, new, 1), encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("released: 2026-11-01", 'released: "2026-11-01"',
         "released: expected a real date YYYY-MM-DD (unquoted), got '2026-11-01'"),
        ("released: 2026-11-01", "releesed: 2026-11-01", "releesed: unknown key; the keys here "
         "are version, torch_release, released, tolerances, numerics, timeouts, skip_policy, "
         "required, grades, extends, tiers, test_lists, report_format"),
        ("released: 2026-11-01\n", "", "released: missing; this key is required"),
        ("max_skip_days: 180", "max_skip_days: 0",
         "skip_policy.max_skip_days: expected a whole number of days >= 1, got 0"),
        ("max_skipped_share: 0.02", "max_skipped_share: 2",
         "grades.0 (conformant).max_skipped_share: expected a number from 0 to 1, got 2"),
        ("real_clock: true", 'real_clock: "true"',
         "grades.0 (conformant).real_clock: expected true or false (unquoted), got 'true'"),
    ],
    ids=["quoted-date", "misspelt-date", "no-date", "zero-days", "share-over-1", "quoted-flag"],
)
def test_malformed_limits_are_one_line_errors(tmp_path: Path, old: str, new: str, message: str):
    directory = edited_standard(tmp_path, old, new)
    with pytest.raises(InputError) as refused:
        load_standard(directory=directory)
    assert str(refused.value) == f"{directory / 'standard.yaml'}: {message}"


def test_a_malformed_CKIT_TODAY_is_a_one_line_error():
    with pytest.raises(InputError, match=r"^CKIT_TODAY: expected a date YYYY-MM-DD, got 'soon'$"):
        run_date("soon")


def test_no_override_is_the_clock():
    date = run_date(None)
    assert (date.today, date.overridden) == (dt.date.today(), False)
    assert RunDate.from_json(date.to_json()) == date


def test_an_override_keeps_both_dates():
    date = run_date("2024-12-31")
    assert date.to_json() == {"today": "2024-12-31", "clock_today": dt.date.today().isoformat(),
                              "clock_override": True}
    assert RunDate.from_json(date.to_json()) == date
