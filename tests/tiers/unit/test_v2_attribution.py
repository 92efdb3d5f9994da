"""Standard v2's attribution, through a real ``ckit run`` on simnpu: an op simnpu leaves to its
boxed fallback (a ``fallback`` fault) still PASSes, its record saying so; an op the standard
requires natively fails as ``cpu-fallback`` however right its values; the report's summary
counts what the records say. Its run is the shared planted one (``unit_helpers.plant``): the
summary's numbers are checked on these tests' records, and the report's summary is shown to be
the same count of all its records."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest
from unit_helpers import UnitRun, plant

from kit.report.attribution_summary import attribution_summary
from kit.results import TestRecord
from kit.standard import load_standard
from kit.tiers.unit.config import load_unit_config

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("simnpu") is None, reason="simnpu not installed"),
    pytest.mark.slow(seconds=60),
]

REQUIRED = "unit/opinfo/where/float32/0"  # aten::where.self: v2 requires it natively
TOLERATED = "unit/opinfo/flip/float32/0"  # aten::flip: may fall back
NATIVE = "unit/opinfo/add/float32/0"
plant([{"op": "where.self", "kind": "fallback"}, {"op": "flip", "kind": "fallback"}],
      [REQUIRED, TOLERATED, NATIVE])


def _summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """``summary.attribution`` of a report holding ``records`` alone."""
    totals = attribution_summary([TestRecord.from_json(record) for record in records])
    assert totals is not None
    return dict(totals.to_json())


def test_a_fallback_passes_visibly_unless_the_standard_requires_the_op_natively(
    planted_unit_run: UnitRun,
) -> None:
    required = load_unit_config(load_standard()).attribution
    assert required is not None and "aten::where.self" in required.native_required
    report, records = planted_unit_run.report, planted_unit_run.records

    tolerated = records[TOLERATED]
    assert tolerated["status"] == "PASS", tolerated["message"]
    assert tolerated["details"]["dispatch"] == {"fallback": ["aten::flip"]}
    assert tolerated["details"]["max_abs_err"] == 0.0  # judged as usual

    failed = records[REQUIRED]
    assert failed["status"] == "FAIL_SEMANTIC"  # wrong, but not by a number
    assert failed["details"]["failure"] == "cpu-fallback"
    assert failed["details"]["dispatch"] == {"fallback": ["aten::where.self"]}
    assert "aten::where.self ran through the backend's fallback" in failed["message"]

    assert records[NATIVE]["details"]["dispatch"] == {"native": ["aten::add.Tensor"]}
    # An honest list agrees with the judge's CPU trace of the same call: no finding.
    assert "dispatch_check" not in records[NATIVE]["details"]
    assert "dispatch_check" not in tolerated["details"]

    # The report counts every record of the shared run; these three alone count so.
    assert report["summary"]["attribution"] == _summary(report["records"])
    totals = _summary([records[REQUIRED], records[TOLERATED], records[NATIVE]])
    assert totals["tests"] == 3 and totals["tests_with_fallback"] == 2
    assert totals["ops"]["aten::flip"] == {"native": 0, "fallback": 1, "decomposed": 0}
    assert totals["ops"]["aten::where.self"] == {"native": 0, "fallback": 1, "decomposed": 0}
    assert totals["ops"]["aten::add.Tensor"] == {"native": 1, "fallback": 0, "decomposed": 0}
    assert totals["native_rate"] == pytest.approx(1 / 3, abs=1e-6)
