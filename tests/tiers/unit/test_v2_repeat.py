"""Standard v2's repeat calls: every unit case runs again after other values of the same shapes."""

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
from kit.tiers.unit.config import parse_unit_config
from kit.tiers.unit.repeat import AGAIN, FAILURE, Repeat, other_values

STANDARD = load_standard()
MUL = "unit/opinfo/mul/float32/3"


def test_v2_cases_repeat_bitwise_except_the_declared_nondeterministic_ops() -> None:
    assert unit_case(STANDARD, MUL).repeat == Repeat(bitwise=True)
    assert unit_case(STANDARD, "unit/opinfo/index_add/float32/0").repeat == Repeat(bitwise=False)
    assert unit_case(load_standard("v1"), MUL).repeat is None


def test_other_values_keep_shapes_and_values_but_move_them() -> None:
    x = torch.arange(6.0).reshape(2, 3)
    index = torch.tensor([2, 0])
    rolled, same_index = other_values(([x, index], {}))[0]
    assert rolled.shape == x.shape and not torch.equal(rolled, x)
    assert sorted(rolled.flatten().tolist()) == x.flatten().tolist()
    assert torch.equal(same_index, index)


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
    caught, control = MUL, "unit/opinfo/mul/float64/3"
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
