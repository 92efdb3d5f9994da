"""The kit's own demo device certified by the README's worked example: simnpu (pure-Python
PrivateUse1, bfloat16 autocast only, float64 matrix gaps in its skip manifest) meets conformant
on its complete standard: every test has a record, and the float16 autocast tests it does not
claim are not applicable, failing nothing; then the example's faulty block, run as written in a
fresh clone, fails mul's float32 tests.

Two sizes of the example's first block (``SIZES``): ``complete``, as written in a fresh clone
(every test of the standard: 7.5 minutes alone on 2 cores), in ``make test-full``; and
``shard``, the same run on a fixed shard of the standard (``SHARD``,
every tier split by the kit's own hash), in CI's heavy suite: what would break a tier on simnpu
breaks some of its tests in any shard. ``make bench-certify`` times the complete run against
issue 38's target.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from readme_clone import KIT_ROOT, fresh_clone, readme_block, run_block

from kit.runner.plan import Shard, hash_shard
from kit.standard import load_standard
from kit.tiers.registry import complete_run_tiers

pytestmark = pytest.mark.slow(seconds=120)

pytest.importorskip("simnpu", reason="install the demo vendor: ckit vendors install simnpu")

WORKED_EXAMPLE = "### Worked example: simnpu"
#: The fixed shard of simnpu's complete standard this suite runs (``ckit run --shard``).
#: A sixteenth holding tests of every tier and float16 autocast tests simnpu does not claim.
SHARD = Shard(9, 16)
#: Each size of the example's complete run and the suite that runs it.
SIZES = {"complete": pytest.mark.full, "shard": pytest.mark.heavy}


def _fault_free_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "SIMNPU_FAULTS"}


@pytest.fixture(scope="module", params=[pytest.param(size, marks=mark)
                                         for size, mark in SIZES.items()])
def simnpu_report(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                 ) -> tuple[dict[str, Any], str, str]:
    """The report of simnpu's run, as the worked example runs it; its stderr; its size."""
    size: str = request.param
    workspace = tmp_path_factory.mktemp(f"simnpu-{size}")
    if size == "complete":  # the block as written, in a fresh clone
        kit = fresh_clone(workspace / "kit")
        done = run_block(readme_block(WORKED_EXAMPLE), kit, _fault_free_env(), timeout=3600)
        out = kit / "results" / "simnpu"
    else:
        out = workspace / "run"
        done = subprocess.run(
            [sys.executable, "-m", "kit", "run", "--vendor", "simnpu", "--workers", "2",
             "--shard", str(SHARD), "--no-sign", "--out", str(out)],
            cwd=KIT_ROOT, env=_fault_free_env(), capture_output=True, text=True, timeout=1800,
            check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    report: dict[str, Any] = json.loads((out / "report.json").read_text())
    return report, done.stderr, size


def test_simnpu_meets_conformant_on_its_complete_standard(
    simnpu_report: tuple[dict[str, Any], str, str],
) -> None:
    report, stderr, size = simnpu_report
    reasons = report["grade"]["reasons"]
    if size == "complete":
        assert report["grade"]["name"] == "conformant", reasons
    else:
        # A shard is graded when merged; alone, its narrowing keeps it from conformant, and so
        # may its share of skipped tests, judged on the whole run's (within the policy there).
        assert any("does not cover the whole standard" in r for r in reasons), stderr[-2000:]
        assert all("does not cover the whole standard" in r or "skipped too much" in r
                   for r in reasons), reasons
    standard = load_standard()
    expected = {t for tier in complete_run_tiers() for t in standard.test_ids(tier)
                if size == "complete" or hash_shard(t, SHARD.count) == SHARD.index}
    records = {r["id"]: r for r in report["records"]}
    assert set(records) == expected and report["missing"] == []
    assert {r["tier"] for r in records.values()} == set(complete_run_tiers())
    # What did not pass is in simnpu's skip manifest or not applicable, as in a complete run.
    others = {r["status"] for r in records.values()} - {"PASS", "NOT_APPLICABLE"}
    assert others <= {"SKIPPED"}, others
    unclaimed = [r for r in records.values()
                 if r["details"].get("na_reason") == "unclaimed-autocast"]
    assert unclaimed and all(r["id"].endswith("/autocast-float16") for r in unclaimed)


@pytest.mark.heavy
def test_the_injected_fault_fails_muls_float32_tests_with_their_errors(
    tmp_path: Path,
) -> None:
    kit = fresh_clone(tmp_path / "kit")
    done = run_block(readme_block(WORKED_EXAMPLE, 1), kit, _fault_free_env(), timeout=600)
    assert done.returncode == 1, done.stderr[-2000:]  # the faulty run: non-conformant
    report = json.loads((kit / "results" / "simnpu-faulty" / "report.json").read_text())
    records = report["records"]
    failed = [r for r in records if r["status"] == "FAIL_NUMERIC"]
    assert failed and all(r["id"].startswith("unit/opinfo/mul/float32/") for r in records)
    assert all("max abs err" in r["message"] for r in failed), failed[0]
