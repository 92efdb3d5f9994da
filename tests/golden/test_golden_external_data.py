"""Issue 24's probe: a vendor's ONNX program naming external data had it read from the
auditor's working directory during ``golden check``. The kit now refuses such a program itself
before any runtime sees it (``kit.golden.self_contained``), wherever the tensor hides; the
ONNX Runtime this kit pins refuses it too when loaded from bytes ("model_path must not be
empty"), which the runtime test below holds, but the check no longer depends on it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from golden_helpers import ONNX_FLOW, ONNX_TEST, Program, make_golden_run
from onnx import TensorProto, helper, numpy_helper

from kit.cli import main
from kit.errors import ExitCode
from kit.flows.interface import Lowered
from kit.golden.runtimes import load_program
from kit.golden.self_contained import onnx_external_locations

SECRET = np.arange(4, dtype=np.float32) + 100


def _external_tensor(name: str, location: str = "secret.bin") -> TensorProto:
    """A float32[4] tensor whose bytes live in ``location`` beside whoever loads the program."""
    weight = numpy_helper.from_array(np.zeros(4, dtype=np.float32), name=name)
    weight.ClearField("raw_data")
    weight.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", "16")):
        entry = weight.external_data.add()
        entry.key, entry.value = key, value
    return weight


def _model(nodes: list[object], initializer: list[TensorProto]) -> bytes:
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        initializer=initializer,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return bytes(model.SerializeToString())


def _program_with_external_weight() -> bytes:
    """y = x + w, where w's bytes live in ``secret.bin`` beside whoever loads the program."""
    return _model([helper.make_node("Add", ["x", "w"], ["y"])], [_external_tensor("w")])


def _program_with_external_constant(location: str) -> bytes:
    """The same, w a Constant node's attribute instead of an initializer."""
    constant = helper.make_node("Constant", [], ["w"], value=_external_tensor("c", location))
    return _model([constant, helper.make_node("Add", ["x", "w"], ["y"])], [])


def test_onnx_external_data_reading_the_auditors_file_is_refused_by_golden_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    program = Program(ONNX_TEST, ONNX_FLOW, Lowered(_program_with_external_weight(), "onnx", 1),
                      (torch.zeros(4),), (torch.from_numpy(SECRET),))
    run = make_golden_run(tmp_path / "signed", [program])
    auditor = tmp_path / "auditor"
    auditor.mkdir()
    (auditor / "secret.bin").write_bytes(SECRET.tobytes())  # what the program would return
    monkeypatch.chdir(auditor)
    code = main(["golden", "check", str(run.run_dir)])
    out = capsys.readouterr().out
    assert code == ExitCode.VERIFICATION_FAILED, out
    (line,) = [line for line in out.splitlines() if line.startswith("FAIL ")]
    assert line == (f"FAIL {ONNX_FLOW} {ONNX_TEST} (re-run): the program names data outside "
                    "itself (secret.bin): a golden program is one self-contained file; export "
                    "it with its data inside")


def test_onnx_external_data_hidden_in_a_node_attribute_is_found() -> None:
    absolute = "/etc/ckit-auditor-secret.bin"
    assert onnx_external_locations(_program_with_external_constant(absolute)) == [absolute]
    assert onnx_external_locations(_program_with_external_weight()) == ["secret.bin"]


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
