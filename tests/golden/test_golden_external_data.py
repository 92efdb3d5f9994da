"""Issue 24's probe: a vendor's ONNX program naming external data had it read from the
auditor's working directory during ``golden check``. With the ONNX Runtime this kit pins, a
program loaded from bytes (as the reference runtime loads every golden program) that names
external data is refused by the runtime itself ("model_path must not be empty"), so the
golden check fails that entry; this holds it so, with the auditor's file there to be read."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from kit.golden.runtimes import load_program

SECRET = np.arange(4, dtype=np.float32) + 100


def _program_with_external_weight() -> bytes:
    """y = x + w, where w's bytes live in ``secret.bin`` beside whoever loads the program."""
    weight = numpy_helper.from_array(np.zeros(4, dtype=np.float32), name="w")
    weight.ClearField("raw_data")
    weight.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "secret.bin"), ("offset", "0"), ("length", "16")):
        entry = weight.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        initializer=[weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return bytes(model.SerializeToString())


def test_onnx_program_reading_external_data_from_the_auditors_directory_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "secret.bin").write_bytes(SECRET.tobytes())  # the auditor's own file
    monkeypatch.chdir(tmp_path)
    with pytest.raises(Exception) as refused:  # noqa: PT011 - the runtime's own error type
        load_program("onnx", _program_with_external_weight())
    assert "model_path must not be empty" in str(refused.value)


def test_a_self_contained_onnx_program_still_loads(tmp_path: Path) -> None:
    import torch

    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        initializer=[numpy_helper.from_array(SECRET, name="w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    program = load_program("onnx", model.SerializeToString())
    (out,) = program([torch.zeros(4)])
    assert out.tolist() == SECRET.tolist()
