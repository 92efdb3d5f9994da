"""Blame: a failing op spec names the failing primitive tests it calls (``details.suspects``)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from unit_helpers import UnitRun, plant_apart

from kit.grading.blame import check_suspects, primitives_of, with_suspects
from kit.results import Status, TestRecord
from kit.standard import load_standard

STANDARD = load_standard()
MHA = "unit/opspec/multihead_attention_module/float32/odd-heads4-need_weightsTrue"
BMM = "unit/opinfo/bmm/float32/0"
ADD_SPEC = "unit/opspec/add_broadcast_both/float32/odd"


def test_an_op_spec_is_traced_to_the_aten_ops_it_calls_on_cpu() -> None:
    used = primitives_of(STANDARD, MHA)
    assert {"bmm", "softmax", "addmm"} <= set(used)
    assert "bmm" not in primitives_of(STANDARD, ADD_SPEC)


def test_suspects_name_failing_primitives_of_the_same_dtype_only() -> None:
    records = [
        TestRecord(MHA, Status.FAIL_NUMERIC),
        TestRecord(BMM, Status.FAIL_NUMERIC),
        TestRecord("unit/opinfo/bmm/float64/0", Status.FAIL_NUMERIC),
        TestRecord(ADD_SPEC, Status.FAIL_NUMERIC),
    ]
    blamed = {r.id: r.details for r in with_suspects(records, STANDARD)}
    assert blamed[MHA]["suspects"] == [BMM]
    assert "suspects" not in blamed[ADD_SPEC]
    typed = [dataclasses.replace(r, details=blamed[r.id]) for r in records]
    assert check_suspects(typed) is None
    typed[0] = dataclasses.replace(typed[0], details={"suspects": ["unit/opinfo/bmm/float64/0"]})
    assert check_suspects(typed) is not None


#: In the second shared planted run (``plant_apart``): the first fails an OpInfo test of an op
#: the op spec calls (mul's, by its stale repeat), which would be named a suspect too.
plant_apart([{"op": "bmm", "kind": "wrong_large", "dtype": "float32"}], [MHA, BMM, ADD_SPEC])


@pytest.mark.skipif(importlib.util.find_spec("simnpu") is None, reason="simnpu not installed")
def test_a_broken_primitive_is_named_the_suspect_of_the_op_spec_it_breaks(
    planted_apart_run: UnitRun, tmp_path: Path,
) -> None:
    assert planted_apart_run.returncode == 1
    records = planted_apart_run.records
    assert records[MHA]["status"] == "FAIL_NUMERIC", records[MHA]["message"]
    assert records[MHA]["details"]["suspects"] == [BMM]
    assert records[ADD_SPEC]["status"] == "PASS", records[ADD_SPEC]["message"]
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    shown = subprocess.run(
        [sys.executable, "-m", "kit", "show", str(planted_apart_run.out), "--json"],
        env=env, capture_output=True, text=True, timeout=120)
    roots = json.loads(shown.stdout)["suspected_roots"]
    assert roots == [{"op": "unit/opinfo/bmm", "dtype": "float32", "tests": [MHA]}]


GPT2 = "models/hf/gpt2/eager"


@pytest.mark.slow(seconds=40)
def test_a_failing_eager_model_names_the_failing_primitives_it_calls() -> None:
    """A model on the device's eager path is blamed like an op spec, in the model dtype; the
    same model through a program flow (another runtime) is not."""
    used = primitives_of(STANDARD, GPT2)
    assert {"addmm", "layer_norm", "scaled_dot_product_attention"} <= set(used)
    addmm, onnx = "unit/opinfo/addmm/float32/0", "models/hf/gpt2/onnxruntime_cpu"
    records = [
        TestRecord(GPT2, Status.FAIL_NUMERIC),
        TestRecord(onnx, Status.FAIL_NUMERIC),
        TestRecord(addmm, Status.FAIL_NUMERIC),
        TestRecord("unit/opinfo/addmm/float64/0", Status.FAIL_NUMERIC),
    ]
    blamed = {r.id: r.details for r in with_suspects(records, STANDARD)}
    assert blamed[GPT2]["suspects"] == [addmm]
    assert "suspects" not in blamed[onnx]
    typed = [dataclasses.replace(r, details=blamed[r.id]) for r in records]
    assert check_suspects(typed) is None
    # A flow claims a device primitive.
    typed[1] = dataclasses.replace(typed[1], details={"suspects": [addmm]})
    assert check_suspects(typed) is not None
