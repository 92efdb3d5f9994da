"""Standard v2: a result wrong in something its values cannot show (here a plain OpInfo sample's
shape) is FAIL_SEMANTIC with ``details.failure``, never FAIL_NUMERIC; a run under v1, which
predates the status, records it as FAIL_NUMERIC and writes the report v1's schema takes.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from unit_helpers import plant, run_unit

from kit.report.schema import schema_problem
from kit.standard.catalogue import standard_directory

pytestmark = pytest.mark.skipif(importlib.util.find_spec("simnpu") is None,
                                reason="simnpu not installed")

CAUGHT = "unit/opinfo/neg/float32/0"
SIBLING = "unit/opinfo/neg/float64/0"
#: Every neg result of a float32 input gains a leading dimension; its values stay right.
FAULT = {"op": "neg", "kind": "wrong_shape", "dtype": "float32"}
KIT_ROOT = Path(__file__).resolve().parents[3]


def _report_of(tmp_path: Path) -> dict[str, Any]:
    return json.loads((tmp_path / "out-simnpu" / "report.json").read_text())


plant([FAULT], [CAUGHT, SIBLING])


@pytest.mark.slow(seconds=90)
def test_a_wrong_shape_is_its_own_failure_under_v2(planted_run: dict[str, dict[str, Any]]) -> None:
    records = planted_run
    caught = records[CAUGHT]
    assert caught["status"] == "FAIL_SEMANTIC", caught["message"]
    assert caught["details"]["failure"] == "wrong-shape"
    assert caught["details"]["actual_shape"][0] == 1
    assert "max_abs_err" not in caught["details"]  # judged before any value
    assert records[SIBLING]["status"] == "PASS", records[SIBLING]["message"]


@pytest.mark.slow(seconds=45)
def test_a_run_under_v1_records_it_as_v1_always_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    shutil.copytree(standard_directory("v1"), home / "standards" / "v1")
    shutil.copy(standard_directory("v1").parent / "released-kits.yaml", home / "standards")
    shutil.copytree(KIT_ROOT / "vendors" / "simnpu", home / "vendors" / "simnpu")
    monkeypatch.setenv("CKIT_HOME", str(home))  # v1 alone: the current standard
    records = run_unit("simnpu", [CAUGHT, SIBLING], tmp_path, [FAULT])
    caught = records[CAUGHT]
    assert caught["status"] == "FAIL_NUMERIC", caught["message"]
    assert caught["details"]["failure"] == "wrong-shape"
    assert records[SIBLING]["status"] == "PASS", records[SIBLING]["message"]
    report = _report_of(tmp_path)
    assert report["standard"]["version"] == "v1"
    assert "FAIL_SEMANTIC" not in report["summary"]["overall"]["statuses"]
    assert schema_problem(report) is None
