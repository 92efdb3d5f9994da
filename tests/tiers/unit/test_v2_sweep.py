"""Standard v2's sweep (``unit/sweep/<op>/<dtype>/<sample>``): every OpInfo of the release the
unit list does not name, run as the unit list's OpInfos are. A wrong kernel of an op only the
sweep covers is caught (simnpu's ``wrong_small`` on ``hypot``, and on
``linalg_householder_product`` under the ``conditioned`` class's wider bound) while its
neighbours pass, counted in the pass rate but never required; an OpInfo whose samples the kit
cannot build on a release gets no id.
"""

from __future__ import annotations

from unit_helpers import UnitRun, plant

from kit.standard import load_standard
from kit.tiers.unit.config import load_unit_config
from kit.tiers.unit.entries import Comparison, OpEntry
from kit.tiers.unit.opinfo_cases import _dtype_ids, parse_opinfo_id
from kit.tiers.unit.unit_id import SWEEP_SOURCE

HYPOT = "unit/sweep/hypot/float32/0"
HYPOT_METHOD = "unit/sweep/hypot/float32/method"
HOUSEHOLDER = "unit/sweep/linalg.householder_product/float32/0"
NEIGHBOUR = "unit/sweep/cosh/float32/0"

plant([{"op": "aten::hypot", "kind": "wrong_small"},
       {"op": "aten::linalg_householder_product", "kind": "wrong_small"}],
      [HYPOT, HYPOT_METHOD, HOUSEHOLDER, NEIGHBOUR])


def test_a_wrong_kernel_only_the_sweep_covers_is_caught_and_counted_not_required(
    planted_unit_run: UnitRun,
) -> None:
    records = planted_unit_run.records
    for caught in (HYPOT, HYPOT_METHOD, HOUSEHOLDER):
        assert records[caught]["status"] == "FAIL_NUMERIC", records[caught]
    assert records[NEIGHBOUR]["status"] == "PASS", records[NEIGHBOUR]
    assert records[HOUSEHOLDER]["details"]["bound"]["class"] == "conditioned"
    standard = load_standard()
    assert not any(standard.is_required(test_id) for test_id in (HYPOT, HOUSEHOLDER))
    assert standard.is_required("unit/opinfo/add/float32/0")


def test_sweep_ids_parse_to_their_source() -> None:
    parsed = parse_opinfo_id(HYPOT_METHOD)
    assert (parsed.source, parsed.op_key, parsed.dtype, parsed.sample) == (
        SWEEP_SOURCE, "hypot", "float32", "method")
    assert str(parsed) == HYPOT_METHOD


def test_an_opinfo_whose_samples_cannot_be_built_gets_no_id() -> None:
    config = load_unit_config(load_standard())
    vanished = OpEntry("no_such_op_in_this_release", "", ("float32",), Comparison(),
                       source=SWEEP_SOURCE)
    assert _dtype_ids(config, vanished, "float32") == []
