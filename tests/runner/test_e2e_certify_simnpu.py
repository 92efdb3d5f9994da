"""The kit's own demo device certified on its complete current standard: simnpu (pure-Python
PrivateUse1, bfloat16 autocast only, float64 matrix gaps in its skip manifest) is conformant,
every locked test of the run's tiers has a record, and the float16 autocast tests it does not
claim are not applicable without failing a required test."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from runner_helpers import run_ckit

from kit.standard import load_standard

pytestmark = [pytest.mark.slow(seconds=300), pytest.mark.heavy]

pytest.importorskip("simnpu", reason="install the demo vendor: ckit vendors install simnpu")


def test_simnpu_is_conformant_on_its_complete_standard(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SIMNPU_FAULTS"}
    out = tmp_path / "simnpu"
    run = run_ckit(["run", "--vendor", "simnpu", "--workers", "2", "--no-sign", "--out",
                    str(out)], env, timeout=1800)
    report = json.loads((out / "report.json").read_text())
    assert report["grade"] == {"name": "conformant", "reasons": []}, run.stderr[-2000:]
    assert run.returncode == 0
    standard = load_standard()
    expected = {t for tier in report["run"]["tiers"] for t in standard.test_ids(tier)}
    records = {r["id"]: r for r in report["records"]}
    assert set(records) == expected and report["missing"] == []
    unclaimed = [r for r in records.values()
                 if r["details"].get("na_reason") == "unclaimed-autocast"]
    assert unclaimed and all(r["id"].endswith("/autocast-float16") for r in unclaimed)
    assert any(standard.is_required(r["id"]) for r in unclaimed)
