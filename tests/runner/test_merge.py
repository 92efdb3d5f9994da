"""``ckit merge`` on real shard runs: four shards equal one unsharded run, and every shard set
that is not one run's is refused with one line naming the step and the shard."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from sharding_helpers import (
    SELECTION,
    ckit,
    cpu_key,
    error_line,
    report_of,
    run_shard,
    signing_env,
)

from kit.errors import ExitCode
from kit.runner.merge import layout_free
from kit.signing.sign import sign_output_dir

#: A merge of shards of a narrowed selection: non-conformant, or partial when its tests pass.
NARROWED = (ExitCode.NOT_CONFORMANT, ExitCode.PARTIAL)

pytestmark = [pytest.mark.slow(seconds=100), pytest.mark.heavy]  # six whole runs


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four shards, one unsharded run of the same tests, and a foreign shard."""
    root = tmp_path_factory.mktemp("shards")
    env, _ = signing_env(root)
    for k in range(4):
        run_shard(root / f"shard-{k}-of-4", f"{k}/4", env=env)
    whole = ckit("run", "--vendor", "cpu", *SELECTION, "--out", str(root / "whole"), env=env)
    # Narrowed: non-conformant, or partial when its tests meet a better grade.
    assert whole.returncode in (ExitCode.NOT_CONFORMANT, ExitCode.PARTIAL), whole.stderr[-2000:]
    # A shard of another run: the same count, another --select.
    other = ckit("run", "--vendor", "cpu", "--tier", "unit,flows",
                 "--select", "unit/opinfo/sub/*/?", "--shard", "1/4",
                 "--out", str(root / "other-1-of-4"), env=env)
    assert other.returncode == 0, other.stderr[-2000:]
    return root


def _env(runs: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CONFIG_HOME": str(runs / "config")}


def shards(root: Path, *indices: int) -> list[str]:
    return [str(root / f"shard-{k}-of-4") for k in indices]


def merge(runs: Path, *args: str) -> Any:
    """``ckit merge`` with the keyring that holds the fixture's shard key."""
    return ckit("merge", *args, "--no-sign", "--keyring", str(runs / "keyring"))


def copied(runs: Path, index: int, tmp_path: Path) -> Path:
    target = tmp_path / f"shard-{index}-of-4"
    shutil.copytree(runs / f"shard-{index}-of-4", target)
    return target


def edit_report(run_dir: Path, change: Any, reseal: Path | None) -> None:
    """``reseal``: the key that signs the edited report again (None: left as edited)."""
    report = report_of(run_dir)
    change(report)
    (run_dir / "report.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    if reseal is not None:  # the vendor itself re-signing: only the content checks stand
        (run_dir / "report.dsse.json").unlink()
        sign_output_dir(run_dir, reseal, None)


def flip_one_to_pass(report: dict[str, Any]) -> None:
    flips = [r for r in report["records"] if r["status"] == "NOT_APPLICABLE"]
    assert flips, "the selection gives every shard a NOT_APPLICABLE test"
    flips[0]["status"] = "PASS"


def test_four_shards_merge_into_the_unsharded_runs_report(runs: Path, tmp_path: Path) -> None:
    done = ckit("merge", *shards(runs, 2, 0, 3, 1), "--out", str(tmp_path / "merged"),
                "--no-sign", "--json", "--keyring", str(runs / "keyring"))
    whole = report_of(runs / "whole")
    # The grade's own code (partial's when it applies): narrowed, as whole.
    assert done.returncode in (ExitCode.NOT_CONFORMANT, ExitCode.PARTIAL), done.stderr
    merged = report_of(tmp_path / "merged")
    assert layout_free(merged) == layout_free(whole)
    assert merged["records"] and merged["missing"] == []
    assert {r["status"] for r in merged["records"]} == {"PASS", "NOT_APPLICABLE"}
    assert [m["shard"] for m in merged["run"]["merged_from"]] == ["0/4", "1/4", "2/4", "3/4"]
    assert sum(m["records"] for m in merged["run"]["merged_from"]) == len(merged["records"])
    assert [e["shard"] for e in merged["environments"]] == ["0/4", "1/4", "2/4", "3/4"]
    assert "shard" not in merged["run"]
    assert json.loads(done.stdout)["grade"] == whole["grade"]["name"]


def test_the_merged_report_verifies_and_signs(runs: Path, tmp_path: Path) -> None:
    env = _env(runs)
    env.pop("CKIT_SIGNING_KEY", None)
    keyring = runs / "keyring"
    done = ckit("merge", *shards(runs, 0, 1, 2, 3), "--out", str(tmp_path / "m"),
                "--keyring", str(keyring), env=env)
    assert done.returncode in NARROWED, done.stderr
    verified = ckit("verify", str(tmp_path / "m"), "--keyring", str(keyring), env=env)
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.startswith("OK: cpu report signed by")


def test_a_missing_shard_is_named(runs: Path, tmp_path: Path) -> None:
    done = merge(runs, *shards(runs, 0, 2, 3), "--out", str(tmp_path / "m"))
    assert done.returncode == 3
    assert error_line(done) == ("ckit: error: merge step 4: missing shard(s) 1/4 of 4: merge "
                                "all 4 shards of the run")
    assert not (tmp_path / "m").exists()  # nothing written


def test_a_shard_given_twice_is_refused(runs: Path, tmp_path: Path) -> None:
    copy = copied(runs, 1, tmp_path)
    done = merge(runs, *shards(runs, 0, 1, 2, 3), str(copy), "--out", str(tmp_path / "m"))
    assert "merge step 4: " in error_line(done)
    assert "are both shard 1/4: give each shard once" in error_line(done)


def test_a_foreign_shard_is_refused(runs: Path, tmp_path: Path) -> None:
    done = merge(runs, *shards(runs, 0, 2, 3), str(runs / "other-1-of-4"),
                 "--out", str(tmp_path / "m"))
    line = error_line(done)
    assert line.startswith("ckit: error: merge step 3: shard 1/4 (")
    assert "in --select" in line and line.endswith("not shards of one run")


def test_an_unsharded_run_is_no_shard(runs: Path, tmp_path: Path) -> None:
    done = merge(runs, str(runs / "whole"), "--out", str(tmp_path / "m"))
    assert "merge step 1: " in error_line(done)
    assert error_line(done).endswith("not a shard (its run had no --shard); only the shards of "
                                     "one run merge")


def test_an_unfinished_shard_is_named(runs: Path, tmp_path: Path) -> None:
    shard = copied(runs, 3, tmp_path)
    (shard / "report.dsse.json").unlink()
    done = merge(runs, *shards(runs, 0, 1, 2), str(shard), "--out", str(tmp_path / "m"))
    assert error_line(done) == (f"ckit: error: merge step 1: {shard}: no report.dsse.json: the "
                                f"shard has not finished (`ckit run --resume {shard}`) or this "
                                "is no run directory")


def test_record_flipped_to_pass_after_the_shard_finished(runs: Path, tmp_path: Path) -> None:
    shard = copied(runs, 2, tmp_path)
    edit_report(shard, flip_one_to_pass, reseal=None)
    done = merge(runs, *shards(runs, 0, 1, 3), str(shard), "--out", str(tmp_path / "m"))
    assert "merge step 1: " in error_line(done)
    assert "report.json was modified after signing" in error_line(done)


def test_record_flipped_and_envelope_resealed(runs: Path, tmp_path: Path) -> None:
    shard = copied(runs, 0, tmp_path)
    edit_report(shard, flip_one_to_pass, reseal=cpu_key(_env(runs)))
    done = merge(runs, str(shard), *shards(runs, 1, 2, 3), "--out", str(tmp_path / "m"))
    assert "merge step 2: shard 0/4 (" in error_line(done)
    assert "summary does not match the records" in error_line(done)


def test_overlapping_shards_resealed(runs: Path, tmp_path: Path) -> None:
    # Shard 1 claims one of shard 0's tests in its part (and records it): two records of one
    # test would make every count ambiguous.
    taken = report_of(runs / "shard-0-of-4")["records"][0]

    def overlap(report: dict[str, Any]) -> None:
        report["run"]["shard"]["tests"] = sorted([*report["run"]["shard"]["tests"], taken["id"]])
        report["records"] = sorted([*report["records"], taken], key=lambda r: r["id"])
        report["summary"] = report_of(runs / "whole")["summary"]  # never consistent; see below

    shard = copied(runs, 1, tmp_path)
    edit_report(shard, overlap, reseal=cpu_key(_env(runs)))
    done = merge(runs, *shards(runs, 0, 2, 3), str(shard), "--out", str(tmp_path / "m"))
    # The forged summary is caught first (step 2); a consistent forgery meets step 5.
    assert "merge step 2: " in error_line(done) or "overlapping shards" in error_line(done)


def test_shard_from_another_kit(runs: Path, tmp_path: Path) -> None:
    shard = copied(runs, 3, tmp_path)
    edit_report(shard, lambda r: r["kit"].update(digest="0" * 64), reseal=cpu_key(_env(runs)))
    done = merge(runs, *shards(runs, 0, 1, 2), str(shard), "--out", str(tmp_path / "m"))
    line = error_line(done)
    assert "merge step 3: " in line
    assert "kit digest" in line


def test_merge_never_writes_into_an_existing_report(runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "m"
    assert merge(runs, *shards(runs, 0, 1, 2, 3), "--out", str(out)).returncode in NARROWED
    before = (out / "report.json").read_bytes()
    again = merge(runs, *shards(runs, 0, 1, 2, 3), "--out", str(out))
    assert again.returncode == 3
    assert (out / "report.json").read_bytes() == before
