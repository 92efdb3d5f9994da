"""The journal API in-process: the chain, the run key, torn lines, strict numbers, rendering."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
import os
import stat
import threading
from pathlib import Path

import pytest

from kit.clock import RunDate
from kit.device import DeviceInfo
from kit.errors import InputError, KitCrash
from kit.formats import write_report_files
from kit.grading import build_report, collect_environment
from kit.results import Status, TestRecord
from kit.rundir import JOURNAL_NAME, RUN_FILE
from kit.runner import journal as journal_module
from kit.runner.journal import (
    load_journal,
    open_journal,
    run_id_of,
    run_key_path,
)
from kit.standard import load_standard
from kit.strict_json import loads_strict
from kit.vendors import SkipManifest, load_vendor

ADD = "unit/opinfo/add/float32/"


@pytest.fixture
def run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An output directory with a run.json (its bytes are all the journal needs of it)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    out = tmp_path / "out"
    out.mkdir()
    (out / RUN_FILE).write_text('{"started_at": "2026-11-22T10:00:00+00:00"}\n')
    return out


def _passing(count: int, start: int = 0) -> list[TestRecord]:
    return [TestRecord(f"{ADD}{n}", Status.PASS, 0.5) for n in range(start, start + count)]


def _journal_with(out: Path, records: list[TestRecord]) -> None:
    journal = open_journal(out)
    for record in records:
        journal.append(record)
    journal.close()


def test_a_reopened_journal_continues_the_chain(run_dir: Path) -> None:
    _journal_with(run_dir, _passing(2))
    _journal_with(run_dir, _passing(2, start=2))
    assert list(load_journal(run_dir / JOURNAL_NAME)) == [f"{ADD}{n}" for n in range(4)]


def test_the_run_key_is_private_and_outside_the_output_dir(run_dir: Path) -> None:
    _journal_with(run_dir, _passing(1))
    key = run_key_path(run_id_of(run_dir))
    assert not key.is_relative_to(run_dir)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700


def test_a_journal_whose_key_is_gone_is_not_trusted(run_dir: Path) -> None:
    _journal_with(run_dir, _passing(1))
    run_key_path(run_id_of(run_dir)).unlink()
    with pytest.raises(InputError, match="journal key is missing"):
        open_journal(run_dir)


def test_a_journal_moved_beside_another_run_json_is_not_trusted(run_dir: Path) -> None:
    _journal_with(run_dir, _passing(1))
    (run_dir / RUN_FILE).write_text('{"started_at": "2026-11-22T11:00:00+00:00"}\n')
    with pytest.raises(InputError, match="journal key is missing"):
        open_journal(run_dir)


def test_a_torn_fragment_alone_is_cut_and_the_run_starts_its_chain(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (run_dir / JOURNAL_NAME).write_bytes(b'{"details":{},"dur')
    _journal_with(run_dir, _passing(1))
    assert list(load_journal(run_dir / JOURNAL_NAME)) == [f"{ADD}0"]
    assert capsys.readouterr().err.count("torn last line") == 1


def test_a_finished_run_is_not_opened_for_appending(run_dir: Path) -> None:
    for name in ("report.json", "report.dsse.json"):
        (run_dir / name).write_text("{}\n")
    with pytest.raises(InputError, match="already finished"):
        open_journal(run_dir)
    assert not (run_dir / JOURNAL_NAME).exists()


def test_non_finite_numbers_are_journaled_as_the_report_spells_them(run_dir: Path) -> None:
    odd = TestRecord(f"{ADD}0", Status.FAIL_NUMERIC, math.nan, "nan out",
                     {"max_abs_err": math.nan, "max_rel_err": math.inf, "ratios": [-math.inf]})
    _journal_with(run_dir, [odd])
    (line,) = (run_dir / JOURNAL_NAME).read_bytes().splitlines()
    loads_strict(line)  # strict JSON: no NaN, no Infinity
    record = load_journal(run_dir / JOURNAL_NAME)[odd.id]
    assert record.duration_s == 0.0
    assert record.details == {"max_abs_err": "nan", "max_rel_err": "inf", "ratios": ["-inf"],
                              "duration_s": "nan"}


def test_what_the_journal_allows_renders_in_every_format(run_dir: Path) -> None:
    odd = TestRecord(f"{ADD}0", Status.FAIL_NUMERIC, math.inf, "inf out",
                     {"max_abs_err": math.inf, "max_rel_err": math.nan, "mismatched": 1})
    _journal_with(run_dir, [odd, *_passing(1, start=1)])
    report = build_report(
        records=list(load_journal(run_dir / JOURNAL_NAME).values()),
        standard=dataclasses.replace(load_standard(), test_lists={}),
        vendor=load_vendor("cpu"),
        skips=SkipManifest(entries=()),
        environment=collect_environment(DeviceInfo("cpu", 1, "x86_64")),
        run={"tiers": ["unit"], "select": [f"{ADD}*"], "timeout_s": None, "workers": 1,
             "started_at": "2026-11-22T10:00:00+00:00",
             "finished_at": "2026-11-22T10:05:00+00:00", "complete": False},
        clock=RunDate(dt.date(2026, 11, 22)),
    )
    written = write_report_files(report, run_dir / "report")
    document = loads_strict(written["report.json"].read_bytes())
    assert json.dumps(document, allow_nan=False)
    assert "inf" in written["results.csv"].read_text()


def test_lines_are_written_at_once_and_fsynced_in_groups(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []  # each fsync of the journal: how many lines the file held
    real_fsync = os.fsync
    path = run_dir / JOURNAL_NAME

    def counting_fsync(fd: int) -> None:
        synced.append(path.read_bytes().count(b"\n"))
        real_fsync(fd)

    monkeypatch.setattr(journal_module, "SYNC_WITHIN_S", 3600.0)  # the line count decides here
    journal = open_journal(run_dir)  # makes the run key (fsynced) first
    monkeypatch.setattr(os, "fsync", counting_fsync)
    group = journal_module.SYNC_EVERY_LINES
    for count, record in enumerate(_passing(group - 1), start=1):
        journal.append(record)
        # Written before any fsync: a killed orchestrator loses no finished test.
        assert len(load_journal(path)) == count
    assert synced == []
    journal.append(_passing(1, start=group)[0])
    assert synced == [group]
    journal.sync()  # nothing unsynced: no fsync
    journal.append(_passing(1, start=group + 1)[0])
    journal.close()
    assert synced == [group, group + 1]


def test_a_lone_line_is_fsynced_within_the_window(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fsynced = threading.Event()
    real_fsync = os.fsync

    def noting_fsync(fd: int) -> None:
        real_fsync(fd)
        fsynced.set()

    monkeypatch.setattr(journal_module, "SYNC_WITHIN_S", 0.05)
    journal = open_journal(run_dir)
    monkeypatch.setattr(os, "fsync", noting_fsync)
    journal.append(_passing(1)[0])
    assert fsynced.wait(timeout=60), "the window's timer never fsynced the line"
    journal.close()


def test_the_records_a_journal_keeps_are_those_reading_it_back_gives(run_dir: Path) -> None:
    """The orchestrator reports from ``Journal.records``, not from the file read again: they
    must be the very records the file holds (values made JSON-safe, tuples as lists), the
    earlier run's part included."""
    _journal_with(run_dir, _passing(2))
    odd = TestRecord(f"{ADD}9", Status.FAIL_NUMERIC, math.inf, "off",
                     {"max_abs_err": math.nan, "shape": (2, 3), "ops": ("aten::add",)})
    journal = open_journal(run_dir)
    journal.append(odd)
    journal.append(_passing(1, start=5)[0])
    kept = journal.records
    journal.close()
    read_back = load_journal(run_dir / JOURNAL_NAME)
    assert kept == read_back
    assert list(kept) == list(read_back)  # journaled order
    assert kept[odd.id] != odd  # what the line holds, not what was appended


def test_a_test_journaled_twice_is_the_kits_crash_and_writes_nothing(run_dir: Path) -> None:
    """Reading a journal back refuses a second record of a test; appending one is refused
    first, before the line is written (the report is built from the journal's kept records)."""
    journal = open_journal(run_dir)
    journal.append(_passing(1)[0])
    before = (run_dir / JOURNAL_NAME).read_bytes()
    with pytest.raises(KitCrash, match="journaled already"):
        journal.append(TestRecord(f"{ADD}0", Status.FAIL_NUMERIC, 0.1, "again"))
    journal.close()
    assert (run_dir / JOURNAL_NAME).read_bytes() == before
    assert load_journal(run_dir / JOURNAL_NAME)[f"{ADD}0"].status is Status.PASS
