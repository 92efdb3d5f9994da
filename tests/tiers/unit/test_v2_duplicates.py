"""Duplicate indices (issue 38 item 4): op specs whose indices repeat, judged in any order of
the duplicates; a lost contribution (simnpu's ``lost_update``) caught, the same op without
duplicates still passing, and the ``any-writer`` rule of writes without accumulation."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import torch
from unit_helpers import plant, write_spec

from kit.errors import InputError
from kit.standard import load_standard
from kit.tiers.unit.cases import unit_case
from kit.tiers.unit.checking import execute_case, judge_case
from kit.tiers.unit.duplicates import ANY_WRITER, DuplicatesMismatch
from kit.tiers.unit.opspecs import load_op_specs
from kit.tiers.unit.trees import tensor_leaves

STANDARD = load_standard()
LOCKED = set(STANDARD.test_ids("unit"))
DUPLICATES = "unit/opspec/index_add_duplicates/float32/odd"
DUPLICATES_BF16 = "unit/opspec/index_add_duplicates/bfloat16/odd"
#: OpInfo's index_add sample of a 5 x 5 tensor and a permutation: no index repeats.
NO_DUPLICATES = "unit/opinfo/index_add/float32/6"
#: Another accumulation over duplicates, not index_add: the fault leaves it alone.
OTHER_OP = "unit/opspec/scatter_add_duplicates/float32/odd"
plant([{"op": "index_add", "kind": "lost_update"}],
      [DUPLICATES, DUPLICATES_BF16, NO_DUPLICATES, OTHER_OP])


def test_the_duplicate_tests_are_locked() -> None:
    assert {DUPLICATES, DUPLICATES_BF16, NO_DUPLICATES, OTHER_OP} <= LOCKED
    written = {i.split("/")[2] for i in LOCKED if i.endswith("_duplicates/float32/small")
               or "_duplicates/float32/small-" in i}
    assert {"index_copy_duplicates", "scatter_duplicates", "index_put_duplicates",
            "put_duplicates", "index_put_accumulate_duplicates",
            "scatter_reduce_prod_duplicates"} <= written


def test_a_lost_duplicate_contribution_fails_numeric_naming_the_rule(
    planted_run: dict[str, dict[str, Any]],
) -> None:
    for test_id in (DUPLICATES, DUPLICATES_BF16):
        record = planted_run[test_id]
        assert record["status"] == "FAIL_NUMERIC", record
        assert record["details"]["duplicates"]["rule"] == "accumulation"
        assert "index_add" in record["details"]["duplicates"]["nondeterministic"]
        assert "accumulation over duplicate indices: " in record["message"]


def test_the_same_fault_without_duplicates_passes(
    planted_run: dict[str, dict[str, Any]],
) -> None:
    assert planted_run[NO_DUPLICATES]["status"] == "PASS", planted_run[NO_DUPLICATES]
    other = planted_run[OTHER_OP]
    assert other["status"] == "PASS", other
    assert other["details"]["duplicates"]["rule"] == "accumulation"


def _another_writer(test_id: str) -> tuple[Any, Any, torch.Tensor]:
    """The case, CPU's evidence, and the result a device landing the first duplicate of each
    position instead of CPU's last would give."""
    case = unit_case(STANDARD, test_id)
    evidence = execute_case("cpu", case)
    leaves = dict(tensor_leaves(case.make_inputs("cpu", False)))
    writes = case.comparison.duplicates.writes
    index, source = leaves[writes.index], leaves[writes.source]
    first = leaves["args[0]"].index_copy(0, index.flip(0), source.flip(0))
    assert not torch.equal(first, evidence.result)
    return case, evidence, first


def test_a_device_landing_another_duplicate_passes_any_writer() -> None:
    case, evidence, first = _another_writer("unit/opspec/index_copy_duplicates/float32/odd")
    assert judge_case(STANDARD, case, dataclasses.replace(evidence, result=first))


def test_a_value_no_duplicate_wrote_fails_any_writer() -> None:
    case, evidence, first = _another_writer("unit/opspec/index_copy_duplicates/bfloat16/odd")
    forged = first.clone()
    forged[0, 0] = forged[0, 0] + 64  # row 0 is written by several sources: none wrote this
    with pytest.raises(DuplicatesMismatch) as caught:
        judge_case(STANDARD, case, dataclasses.replace(evidence, result=forged))
    found = caught.value.details()["duplicates"]
    assert found["rule"] == ANY_WRITER and found["no_writer_value"] == 1
    assert found["duplicated_positions"] >= 1
    assert str(caught.value).startswith(f"{ANY_WRITER}: 1 of ")


def test_a_write_naming_no_input_path_is_one_line(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, "dup.yaml", """\
        dims: {N: rows}
        presets: {small: {N: 3}}
        templates:
          copy_dup:
            class: exact
            call: torch.index_copy
            inputs: [{shape: [N]}, {shape: [N], dtype: int64, name: index}, {shape: [N]}]
            args: [0]
            duplicates:
              nondeterministic: undefined winner
              writes: {index: index, source: "args[1]", dim: 0}
            dtypes: [float32]
            cases: [small]
        """)
    with pytest.raises(InputError) as caught:
        load_op_specs(spec.parent)
    assert "duplicates.writes.index" in str(caught.value)
    assert "\n" not in str(caught.value)
