"""``ckit merge`` of body-format shards (a standard's ``report_format: body``, v3): read through
the body's integrity and content reading, merged under the shards' own standard, and written
as a body. The shards are built from records (v3 certifies torch 2.14.1, this suite runs on
2.13.0), written and signed as a run writes and signs them; seconds, not whole runs.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "verification"))

from body_helpers import SELECT, STANDARD, VENDOR, records_of, vendor_key  # noqa: E402

from kit.clock import RunDate  # noqa: E402
from kit.device import DeviceInfo  # noqa: E402
from kit.formats import write_report_files  # noqa: E402
from kit.grading import build_report, collect_environment  # noqa: E402
from kit.patterns import matches  # noqa: E402
from kit.report.body import write_body_files  # noqa: E402
from kit.report.read import body_sha256, read_report  # noqa: E402
from kit.rundir import BODY_FILES, RECORDS_JSONL, REPORT_JSON, RunDir  # noqa: E402
from kit.runner.merge import MergeRefused, merge_shards  # noqa: E402
from kit.runner.plan import BY_HASH, hash_shard  # noqa: E402
from kit.signing.sign import sign_output_dir  # noqa: E402
from kit.standard import load_standard  # noqa: E402
from kit.vendors import SkipManifest, load_vendor  # noqa: E402
from kit.verification.verify import verify_envelope  # noqa: E402

KIT_ROOT = Path(__file__).resolve().parents[2]
COUNT = 2


def _shard_report(index: int, finished: dt.datetime) -> dict[str, Any]:
    """Shard ``index`` of a v3 run narrowed to ``SELECT``, built as ``ckit run --shard``
    builds its report (``kit.runner.plan``'s part by test-id hash)."""
    standard = load_standard(STANDARD)
    tests = [t for t in standard.test_ids("unit")
             if matches(t, SELECT) and hash_shard(t, COUNT) == index]
    shard = {"index": index, "count": COUNT, "balance": BY_HASH, "durations_sha256": None,
             "tests": tests}
    run = {"tiers": ["unit"], "select": [SELECT], "timeout_s": 60.0,
           "started_at": (finished - dt.timedelta(minutes=5)).isoformat(),
           "finished_at": finished.isoformat(), "workers": 1, "shard": shard}
    vendor = dataclasses.replace(load_vendor("cpu"), id=VENDOR, display_name=VENDOR)
    return build_report(records=records_of(tests), standard=standard, vendor=vendor,
                        skips=SkipManifest(entries=()),
                        environment=collect_environment(DeviceInfo("cpu", 1, "x86_64")),
                        run=run, clock=RunDate(finished.date()))


def _shards(root: Path) -> tuple[list[Path], Path, Path]:
    """Two signed body shards of one run, the vendor's key and the keyring holding it."""
    key_path, keyring = vendor_key(root)
    finished = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(minutes=5)
    directories = []
    for index in range(COUNT):
        directory = root / f"shard-{index}-of-{COUNT}"
        write_body_files(_shard_report(index, finished), directory)
        sign_output_dir(directory, key_path, None)
        directories.append(directory)
    return directories, key_path, keyring


@pytest.fixture
def shards(tmp_path: Path) -> tuple[list[Path], Path, Path]:
    return _shards(tmp_path)


@pytest.mark.usefixtures("private_config")
def test_body_shards_merge_into_a_body_that_verifies(shards: tuple[list[Path], Path, Path],
                                                    tmp_path: Path) -> None:
    directories, key_path, keyring = shards
    merged = merge_shards(list(reversed(directories)), keyring)
    assert merged.report["standard"]["version"] == STANDARD  # the shards', not the torch's
    assert merged.missing == ()
    whole = [t for t in load_standard(STANDARD).test_ids("unit") if matches(t, SELECT)]
    assert [r["id"] for r in merged.report["records"]] == sorted(whole)
    sources = merged.report["run"]["merged_from"]
    assert [s["shard"] for s in sources] == ["0/2", "1/2"]
    for source, directory in zip(sources, directories, strict=True):
        files = {name: (directory / name).read_bytes() for name in BODY_FILES}
        assert source["report_sha256"] == body_sha256(files)
        assert source["report_sha256"] == read_report(directory).sha256
    out = tmp_path / "merged"
    assert sorted(write_report_files(merged.report, out)) == sorted(BODY_FILES)
    sign_output_dir(out, key_path, None)
    verified = verify_envelope(out, keyring_dir=keyring)
    assert [s.name for s in verified.subjects] == list(BODY_FILES)
    assert read_report(out).report.grade.name == merged.report["grade"]["name"]


@pytest.mark.usefixtures("private_config")
def test_a_body_shard_changed_after_signing_is_refused_at_step_1(
        shards: tuple[list[Path], Path, Path]) -> None:
    directories, _, keyring = shards
    path = directories[1] / RECORDS_JSONL
    path.write_bytes(path.read_bytes().replace(b'"PASS"', b'"FAIL_NUMERIC"', 1))
    with pytest.raises(MergeRefused, match=r"^merge step 1: .*shard-1-of-2: step 7: "
                                           r"records\.jsonl was modified after signing"):
        merge_shards(directories, keyring)


@pytest.mark.usefixtures("private_config")
def test_ckit_merge_writes_and_names_the_body_files(shards: tuple[list[Path], Path, Path],
                                                     tmp_path: Path) -> None:
    directories, _, keyring = shards
    out = tmp_path / "merged"
    env = {**os.environ, "PYTHONPATH": str(KIT_ROOT)}
    done = subprocess.run([sys.executable, "-m", "kit", "merge", *map(str, directories),
                           "--out", str(out), "--no-sign", "--keyring", str(keyring)],
                          cwd=KIT_ROOT, env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    grade = read_report(out).report.grade.name  # not-certifiable here: torch is not v3's
    assert done.returncode == load_standard(STANDARD).grade(grade).exit_code, done.stderr
    assert not (out / REPORT_JSON).exists()
    named = [line.removeprefix("report: ") for line in done.stderr.splitlines()
             if line.startswith("report: ")]
    assert named == [str(RunDir(out.resolve()).file(name)) for name in BODY_FILES]
    assert f"ckit render {out.resolve()}" in done.stderr
    assert read_report(out).report.standard.version == STANDARD
