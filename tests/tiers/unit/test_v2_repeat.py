"""Standard v2's repeat calls: one OpInfo sample per (op, dtype) runs again after other values of
the same shapes."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from kit.errors import InputError
from kit.outcomes import SemanticMismatch
from kit.standard import load_standard
from kit.tiers.unit.cases import unit_case
from kit.tiers.unit.checking import execute_case, judge_case
from kit.tiers.unit.config import load_unit_config, parse_unit_config
from kit.tiers.unit.repeat import AGAIN, FAILURE, Repeat, other_values
from kit.tiers.unit.repeat_choice import Choice, choice, clearly_differ

STANDARD = load_standard()
#: mul's smallest float32 sample whose answer moves with the other values: the one that repeats.
MUL = "unit/opinfo/mul/float32/1"


def test_v2_cases_repeat_bitwise_except_the_declared_nondeterministic_ops() -> None:
    assert unit_case(STANDARD, MUL).repeat == Repeat(bitwise=True)
    assert unit_case(STANDARD, "unit/opinfo/index_add/float32/6").repeat == Repeat(bitwise=False)
    assert unit_case(load_standard("v1"), MUL).repeat is None


def test_only_one_sample_per_op_and_dtype_repeats() -> None:
    config = load_unit_config(STANDARD)
    assert choice(config, config.op("mul"), "float32") == Choice(1, moves=True)
    for other in ("unit/opinfo/mul/float32/3", "unit/opinfo/mul/float32/noncontiguous",
                  "unit/opspec/add_broadcast_both/float32/odd"):
        assert unit_case(STANDARD, other).repeat is None, other


def test_an_op_no_sample_of_which_moves_repeats_its_special_values() -> None:
    # isnan is all False on OpInfo's finite samples; rolled NaNs move its answer.
    config = load_unit_config(STANDARD)
    assert not choice(config, config.op("isnan"), "float32").moves
    assert unit_case(STANDARD, "unit/opinfo/isnan/float32/special").repeat is not None
    assert unit_case(STANDARD, "unit/opinfo/abs/float32/special").repeat is None


def test_other_values_keep_shapes_and_values_but_move_them() -> None:
    x = torch.arange(6.0).reshape(2, 3)
    index = torch.tensor([2, 0, 1])
    rolled, rolled_index = other_values(([x, index], {}))[0]
    assert rolled.shape == x.shape and not torch.equal(rolled, x)
    assert sorted(rolled.flatten().tolist()) == x.flatten().tolist()
    # The second tensor by two places: pairs of elements change too (dot(x, y) moves).
    assert rolled_index.tolist() == [0, 1, 2]


def test_answers_differ_clearly_beyond_rounding_only() -> None:
    a = torch.tensor([1.0, 2.0, 4.0])
    assert not clearly_differ(a, a + 1e-3)
    assert clearly_differ(a, a.flip(0))
    assert clearly_differ(torch.tensor([True, False]), torch.tensor([False, False]))
    assert clearly_differ((a,), (a, a))


def test_a_repeated_call_that_differs_in_one_bit_fails_unless_declared_nondeterministic() -> None:
    case = unit_case(STANDARD, MUL)
    result, inputs, repeated = execute_case("cpu", case)
    judge_case(STANDARD, case, (result, inputs, repeated))
    again = repeated[AGAIN].clone()
    again.view(torch.int32).reshape(-1)[0] ^= 1
    evidence = (result, inputs, {**repeated, AGAIN: again})
    with pytest.raises(SemanticMismatch) as caught:
        judge_case(STANDARD, case, evidence)
    assert caught.value.details()["failure"] == FAILURE
    judge_case(STANDARD, replace(case, repeat=Repeat(bitwise=False)), evidence)


def test_evidence_without_the_repeated_calls_is_refused() -> None:
    case = unit_case(STANDARD, MUL)
    result, inputs, _ = execute_case("cpu", case)
    with pytest.raises(AssertionError, match="repeated calls"):
        judge_case(STANDARD, case, (result, inputs))


def test_nondeterministic_ops_need_a_reason() -> None:
    data = {"ops": [{"op": "add", "dtypes": ["float32"]}],
            "coverage": {"repeat": {"nondeterministic": ["add"]}}}
    with pytest.raises(InputError, match=r"coverage\.repeat\.why"):
        parse_unit_config(data, Path("unit.yaml"))
    data["coverage"] = {"repeat": {"nondeterministic": ["add"], "why": "atomics"}}
    coverage = parse_unit_config(data, Path("unit.yaml")).coverage
    assert coverage.repeat and coverage.nondeterministic == ("add",)


@pytest.mark.skipif(importlib.util.find_spec("simnpu") is None, reason="simnpu not installed")
def test_a_kernel_caching_its_result_by_shape_is_caught_on_simnpu(tmp_path: Path) -> None:
    caught, control = MUL, "unit/opinfo/mul/float64/1"
    env = {
        **os.environ,
        "SIMNPU_FAULTS": json.dumps([{"op": "mul", "kind": "stale", "dtype": "float32"}]),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "kit", "run", "--vendor", "simnpu", "--tier", "unit",
         "--select", caught, "--select", control, "--timeout", "60", "--no-sign",
         "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 1, done.stderr[-3000:]
    records = {r["id"]: r for r in json.loads((out / "report.json").read_text())["records"]}
    assert records[caught]["status"] == "FAIL_NUMERIC", records[caught]["message"]
    assert records[caught]["details"]["failure"] == FAILURE
    assert "stale" in records[caught]["message"]
    assert records[control]["status"] == "PASS", records[control]["message"]
