"""Standard v2's call forms and view writes: each catches, on a real device (simnpu), a kernel
fault whose values are right, names it by ``details.failure``, and leaves the op's siblings
passing; every form passes on the fault-free cpu vendor."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
from planting_helpers import matching
from unit_helpers import on_clean_cpu, run_unit

from kit.standard import load_standard

pytestmark = pytest.mark.slow(seconds=70)

LOCKED = set(load_standard().test_ids("unit"))
KINDS = ("method", "inplace", "inplacestrided", "out", "outresize", "viewwrite")

#: (simnpu fault, the test that catches it, its failure, a sibling that must still pass).
PLANTED = [
    ({"op": "aten::add_.Tensor", "kind": "fresh_result"},
     "unit/opinfo/add/float32/inplace", "not-in-place", "unit/opinfo/add/float32/0"),
    ({"op": "aten::mul_.Tensor", "kind": "fresh_result", "noncontiguous": True},
     "unit/opinfo/mul/float32/inplacestrided", "not-in-place", "unit/opinfo/mul/float32/inplace"),
    ({"op": "aten::add.out", "kind": "fresh_result"},
     "unit/opinfo/add/float32/out", "out-not-written", "unit/opinfo/add/float32/method"),
    ({"op": "aten::mul.out", "kind": "fresh_result"},
     "unit/opinfo/mul/float32/outresize", "out-not-written", "unit/opinfo/mul/float32/0"),
    ({"op": "aten::transpose.int", "kind": "fresh_result"},
     "unit/opinfo/transpose/float32/viewwrite", "not-a-view", "unit/opinfo/transpose/float32/0"),
]


def test_every_kind_locks_tests_for_the_ops_that_declare_it() -> None:
    counts = {kind: sum(1 for i in LOCKED if i.endswith(f"/{kind}")) for kind in KINDS}
    assert all(count > 0 for count in counts.values()), counts
    # OpInfo declares no in-place sum: no such test is invented.
    assert "unit/opinfo/sum/float32/inplace" not in LOCKED
    assert "unit/opinfo/add/float32/inplace" in LOCKED


FORMS = on_clean_cpu([f"unit/opinfo/*/float32/{kind}" for kind in KINDS])


@pytest.mark.slow(seconds=60)
def test_every_form_and_view_write_passes_on_the_cpu_vendor(
    clean_cpu_run: dict[str, dict[str, Any]],
) -> None:
    records = matching(clean_cpu_run, FORMS)
    assert records and all(r["status"] == "PASS" for r in records.values()), [
        (i, r["message"]) for i, r in records.items() if r["status"] != "PASS"][:5]


@pytest.mark.skipif(importlib.util.find_spec("simnpu") is None, reason="simnpu not installed")
def test_right_values_in_the_wrong_place_are_caught_and_named(tmp_path: Path) -> None:
    assert {caught for _, caught, _, _ in PLANTED} | {s for *_, s in PLANTED} <= LOCKED
    selects = [t for _, caught, _, sibling in PLANTED for t in (caught, sibling)]
    records = run_unit("simnpu", selects, tmp_path, [fault for fault, _, _, _ in PLANTED])
    for _, caught, failure, sibling in PLANTED:
        assert records[caught]["status"] == "FAIL_SEMANTIC", records[caught]["message"]
        assert records[caught]["details"]["failure"] == failure, records[caught]["message"]
        assert records[sibling]["status"] == "PASS", records[sibling]["message"]
