"""The kit's own demo device certified on its complete current standard, by the README's worked
example as written in a fresh clone of the kit: simnpu (pure-Python PrivateUse1, bfloat16
autocast only, float64 matrix gaps in its skip manifest) is conformant, every locked test of the
run's tiers has a record, and the float16 autocast tests it does not claim are not applicable
without failing a required test; then the block's faulty run fails mul's float32 tests."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from readme_clone import fresh_clone, readme_block, run_block

from kit.standard import load_standard

pytestmark = [pytest.mark.slow(seconds=300), pytest.mark.heavy]

pytest.importorskip("simnpu", reason="install the demo vendor: ckit vendors install simnpu")

WORKED_EXAMPLE = "### Worked example: simnpu"


@pytest.fixture(scope="module")
def worked_example(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The clone's results/ and the block's run: its last line, the faulty run, exits 1."""
    kit = fresh_clone(tmp_path_factory.mktemp("simnpu") / "kit")
    env = {k: v for k, v in os.environ.items() if k != "SIMNPU_FAULTS"}
    done = run_block(readme_block(WORKED_EXAMPLE), kit, env, timeout=1800)
    return kit / "results", done


def _report(results: Path, run: str) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((results / run / "report.json").read_text())
    return report


def test_simnpu_is_conformant_on_its_complete_standard(
    worked_example: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    results, done = worked_example
    report = _report(results, "simnpu")  # bash -e: the faulty run ran only after this one's 0
    assert report["grade"] == {"name": "conformant", "reasons": []}, done.stderr[-2000:]
    standard = load_standard()
    expected = {t for tier in report["run"]["tiers"] for t in standard.test_ids(tier)}
    records = {r["id"]: r for r in report["records"]}
    assert set(records) == expected and report["missing"] == []
    unclaimed = [r for r in records.values()
                 if r["details"].get("na_reason") == "unclaimed-autocast"]
    assert unclaimed and all(r["id"].endswith("/autocast-float16") for r in unclaimed)
    assert any(standard.is_required(r["id"]) for r in unclaimed)


def test_the_injected_fault_fails_muls_float32_tests_with_their_errors(
    worked_example: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    results, done = worked_example
    assert done.returncode == 1, done.stderr[-2000:]  # the faulty run: non-conformant
    records = _report(results, "simnpu-faulty")["records"]
    failed = [r for r in records if r["status"] == "FAIL_NUMERIC"]
    assert failed and all(r["id"].startswith("unit/opinfo/mul/float32/") for r in records)
    assert all("max abs err" in r["message"] for r in failed), failed[0]
