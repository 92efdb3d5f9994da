"""Same records -> same bytes; timings strippable; details made strict-JSON safe."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from report_helpers import OPTIONAL, baseline_records, run_info, skip_entry

from kit.formats import formats, write_report_files
from kit.formats.json_format import JsonFormat
from kit.grading import strip_timings
from kit.results import Status, TestRecord


def _refuse_constant(name: str) -> None:
    raise AssertionError(f"report.json holds {name}, which strict JSON forbids")


def mixed_records() -> list[TestRecord]:
    return baseline_records() + [
        TestRecord(
            "unit/opinfo/exp/float16/0",
            Status.FAIL_NUMERIC,
            0.5,
            "3/16 elements differ",
            {"max_abs_err": 0.25, "max_rel_err": 1e-3, "mismatched": 3, "numel": 16},
        ),
        TestRecord("unit/opinfo/log/bfloat16/0", Status.UNSUPPORTED, 0.1, "not implemented for"),
        TestRecord("models/hf/gpt2/export", Status.NOT_APPLICABLE, 0.0, "",
                   {"reason": "vendor does not claim flow export"}),
    ]


def test_record_order_does_not_change_any_file(make_report, manifest):
    skips = manifest([skip_entry("unit/opinfo/log/*/*")])
    records = mixed_records()
    shuffled = records[:]
    random.Random(7).shuffle(shuffled)
    first, second = make_report(records, skips=skips), make_report(shuffled, skips=skips)
    for fmt in formats():
        assert fmt.render(first) == fmt.render(second), fmt.filename


def test_strip_timings_makes_two_runs_comparable(make_report):
    records = mixed_records()
    slower = [dataclasses.replace(r, duration_s=r.duration_s + 3.0) for r in records]
    later = run_info(
        started_at="2026-11-23T09:00:00+00:00", finished_at="2026-11-23T09:09:00+00:00"
    )
    first, second = make_report(records), make_report(slower, run=later)
    assert JsonFormat().render(first) != JsonFormat().render(second)
    assert strip_timings(first) == strip_timings(second)
    stripped = strip_timings(first)
    assert "started_at" not in stripped["run"] and "finished_at" not in stripped["run"]
    assert all("duration_s" not in r for r in stripped["records"])
    assert "duration_s" in first["records"][0], "strip_timings must not change its argument"
    # A run either side of midnight: the clock's day alone differs.
    next_day = {**first, "run": {**first["run"], "clock_today": "2026-11-23"}}
    assert first["run"]["clock_today"] != "2026-11-23"
    assert strip_timings(next_day) == strip_timings(first)


def test_nan_and_infinity_in_details_become_strings(make_report, tmp_path: Path):
    nasty = TestRecord(
        "unit/opinfo/div/float32/0",
        Status.FAIL_NUMERIC,
        0.1,
        "nan where the reference is finite",
        {
            "max_abs_err": float("nan"),
            "max_rel_err": float("inf"),
            "nested": {"low": float("-inf"), "values": (1.5, float("nan"))},
            7: "non-string key",  # type: ignore[dict-item]  # what a careless test might do
        },
    )
    paths = write_report_files(make_report([nasty]), tmp_path)
    text = paths["report.json"].read_text(encoding="utf-8")
    report = json.loads(text, parse_constant=_refuse_constant)
    details = report["records"][0]["details"]
    assert details == {
        "max_abs_err": "nan",
        "max_rel_err": "inf",
        "nested": {"low": "-inf", "values": [1.5, "nan"]},
        "7": "non-string key",
    }


def test_undecodable_bytes_in_a_message_still_write_utf8(make_report, tmp_path: Path):
    # surrogateescape leaves lone surrogates in text decoded from a vendor's raw bytes.
    message = b"kernel said \xff\xfe".decode("utf-8", "surrogateescape")
    record = TestRecord(OPTIONAL, Status.ERROR, 0.1, message, {"raw": message})
    paths = write_report_files(make_report([record]), tmp_path)
    report = json.loads(paths["report.json"].read_bytes().decode("utf-8"))
    assert report["records"][0]["message"] == "kernel said \\udcff\\udcfe"


def test_duplicate_record_ids_are_a_runner_bug(make_report):
    records = [*baseline_records(), TestRecord(OPTIONAL, Status.ERROR)]
    with pytest.raises(ValueError, match="duplicate record id"):
        make_report(records)


def test_write_report_files_writes_every_format(make_report, tmp_path: Path):
    out = tmp_path / "results" / "cpu"
    paths = write_report_files(make_report(mixed_records()), out)
    assert set(paths) == {"report.json", "junit.xml", "results.csv", "summary.md"}
    assert sorted(p.name for p in out.iterdir()) == sorted(paths)
    assert all(path.parent == out and path.stat().st_size > 0 for path in paths.values())


BUILD_IN_A_FRESH_PROCESS = """
import dataclasses, datetime as dt, random, sys
from kit.clock import RunDate
from kit.device import DeviceInfo
from kit.grading import build_report, collect_environment
from kit.formats.json_format import JsonFormat
from kit.results import Status, TestRecord
from kit.standard import load_standard
from kit.vendors import SkipManifest, load_vendor
statuses = list(Status)
records = [TestRecord(f"unit/opinfo/op{i}/float32/0", statuses[i % len(statuses)], 0.5,
                      f"message {i}", {"tags": {"alpha", "beta", f"op{i}"}, "a": float("nan")})
           for i in range(40)]
random.Random(int(sys.argv[1])).shuffle(records)
report = build_report(
    records=records,
    standard=dataclasses.replace(load_standard(), test_lists={}),
    vendor=load_vendor("cpu"),
    skips=SkipManifest(entries=()),
    environment=collect_environment(DeviceInfo("cpu", 1, "x86_64")),
    run={"tiers": ["unit", "models"], "select": [], "timeout_s": None, "workers": 1,
         "started_at": "t0", "finished_at": "t1", "complete": True},
    clock=RunDate(dt.date(2026, 11, 22)),
)
sys.stdout.buffer.write(JsonFormat().render(report))
"""


def test_two_processes_with_different_hash_seeds_write_the_same_bytes():
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        env.pop("CKIT_CONTAINER", None)
        done = subprocess.run(
            [sys.executable, "-c", BUILD_IN_A_FRESH_PROCESS, seed],
            env=env, capture_output=True, check=True,
        )
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    assert b'"a":"nan"' in outputs[0]
    assert b'"tags":["alpha","beta",' in outputs[0]
