"""Compiled models (``compile/models/<source>/<model>/eager|train``): the id's two kinds read in
one place, the locked choice, the second batch; then, heavy (Inductor's C++ for a whole model,
dynamo tracing it), a planted wrong decomposition caught as FAIL_NUMERIC and a backend's compile
error as ERROR with its stage, each on the cpu device, in this process. The forward and the
training step compiled by Inductor in a real ``ckit run`` are the complete cpu run's
(``tests/runner/test_e2e_certify_cpu.py``): a second run here only compiled bert again."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kit.errors import InputError
from kit.outcomes import verdict_of
from kit.pytest_plugin import build_context
from kit.results import Status
from kit.standard import load_standard
from kit.tiers.compile.compile_id import compile_test_id, model_id_of, unit_id_of

BERT = "compile/models/hf/bert/eager"
BERT_TRAIN = "compile/models/hf/bert/train"


def test_a_compile_id_names_a_unit_call_or_a_models_test() -> None:
    assert compile_test_id("models/hf/bert/train") == BERT_TRAIN
    assert model_id_of(BERT_TRAIN) == "models/hf/bert/train"
    assert model_id_of("compile/opinfo/rsqrt/float32/0") is None
    assert unit_id_of("compile/opinfo/rsqrt/float32/0") == "unit/opinfo/rsqrt/float32/0"
    with pytest.raises(InputError, match="not a compiled model's id"):
        model_id_of("compile/models/hf/bert/onnxruntime_cpu")
    with pytest.raises(InputError, match="compiles a model"):
        unit_id_of(BERT)


def test_the_locked_lists_compile_every_model_forward_and_training_step() -> None:
    """Every model test of the eager path and every training step of the models tier, generated
    by the code the lock runs and locked, so a model the models tier gains is compiled too."""
    from kit.tiers.compile.cases import compiled_model_ids

    standard = load_standard()
    models = [i for i in standard.test_ids("models") if i.endswith(("/eager", "/train"))]
    expected = [f"compile/{i}" for i in models]
    assert BERT in expected and BERT_TRAIN in expected and len(expected) == 42
    assert compiled_model_ids(standard) == expected
    assert [i for i in standard.test_ids("compile") if i.startswith("compile/models/")] == expected


def test_the_second_input_is_the_first_batch_row_or_none() -> None:
    import torch

    from kit.tiers.compile.compiled_models import second_batch

    second = second_batch({"ids": torch.zeros(2, 8), "mask": torch.ones(2, 8)})
    assert isinstance(second, dict)
    assert {k: tuple(v.shape) for k, v in second.items()} == {"ids": (1, 8), "mask": (1, 8)}
    assert second_batch((torch.zeros(1, 3),)) is None


def _relu_for_gelu(graph: Any, example_inputs: Any) -> Any:
    """A backend with a wrong decomposition: every GELU of the graph computed as ReLU."""
    import torch

    for node in graph.graph.nodes:
        if node.op == "call_function" and node.target is torch._C._nn.gelu:
            node.target, node.kwargs = torch.relu, {}
    graph.recompile()
    return graph.forward


def _run_in_process(backend: str, compiler: Any) -> Any:
    from torch._dynamo.backends.registry import register_backend

    from kit.tiers.compile.cases import run_compile_case

    register_backend(compiler, name=backend)
    ckit = build_context("cpu", dt.date(2026, 11, 29))
    ckit = replace(ckit, vendor=replace(ckit.vendor, compile_backends=(backend,)))
    with pytest.raises(Exception) as raised:
        run_compile_case(ckit, BERT)
    return verdict_of(raised.value, ckit.notes)


@pytest.mark.heavy
@pytest.mark.slow(seconds=60)
def test_a_wrong_decomposition_in_the_backend_fails_the_model_numerically() -> None:
    verdict = _run_in_process("ckit_test_relu_for_gelu", _relu_for_gelu)
    assert verdict.status is Status.FAIL_NUMERIC, verdict.message
    (found,) = verdict.details["compile"]
    assert found["graphs"] >= 1 and found["stage"] is None  # compiled fine, computed wrong


def _failing_compiler(graph: Any, example_inputs: Any) -> Any:
    raise RuntimeError("lowering failed: no kernel template for aten::addmm")


@pytest.mark.heavy
@pytest.mark.slow(seconds=60)
def test_a_backend_that_cannot_compile_the_model_is_error_at_the_backend_stage(
        tmp_path: Path) -> None:
    verdict = _run_in_process("ckit_test_model_compile_error", _failing_compiler)
    assert verdict.status is Status.ERROR
    assert verdict.message.startswith("CompileFailure: torch.compile with backend "
                                      "'ckit_test_model_compile_error' failed at the backend "
                                      "stage: RuntimeError: lowering failed")
    assert "\n" not in verdict.message
    assert verdict.details["compile"] == [{"backend": "ckit_test_model_compile_error",
                                           "graphs": 0, "graph_breaks": 0, "recompiles": None,
                                           "stage": "backend"}]
