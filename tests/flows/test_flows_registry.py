"""The flow registry: built-ins, vendor flows by entry point, and the one-line errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from flows_helpers import VENDOR_FLOW_SOURCE, write_distribution

from kit.errors import InputError
from kit.flows import BUILTIN_FLOWS, ENTRY_POINT_GROUP, flow_names, get_flow, requires_delegation
from kit.flows.eager import EagerFlow
from kit.flows.executorch_xnnpack import ExecutorchXnnpackFlow, ExecutorchXnnpackInt8Flow
from kit.flows.onnxruntime_cpu import OnnxRuntimeCpuFlow
from kit.vendor_code import NO_VENDOR_CODE_VARIABLE

BUILTINS = ("eager", "executorch_xnnpack", "executorch_xnnpack_int8", "onnxruntime_cpu")


def entry(name: str, target: str) -> str:
    """An ``entry_points.txt`` registering ``target`` as flow ``name``."""
    return f"[{ENTRY_POINT_GROUP}]\n{name} = {target}\n"


def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry_points: str,
            dist: str = "acme-ckit") -> None:
    write_distribution(tmp_path, dist, "acme_ckit_flows", VENDOR_FLOW_SOURCE, entry_points)
    monkeypatch.syspath_prepend(str(tmp_path))


def test_builtin_flows_are_listed_first_and_built() -> None:
    assert flow_names()[:4] == BUILTINS
    assert tuple(BUILTIN_FLOWS) == BUILTINS
    kinds = [type(get_flow(name)) for name in BUILTINS]
    assert kinds == [EagerFlow, ExecutorchXnnpackFlow, ExecutorchXnnpackInt8Flow,
                     OnnxRuntimeCpuFlow]
    assert [get_flow(name).name for name in BUILTINS] == list(BUILTINS)


def test_builtin_flow_facts() -> None:
    eager, fp32, int8, ort = (get_flow(name) for name in BUILTINS)
    assert (eager.program_format, eager.requires_delegation) == (None, False)
    assert (fp32.program_format, fp32.quantized, fp32.requires_delegation) == ("pte", False, True)
    assert (int8.program_format, int8.quantized) == ("pte", True)
    assert (ort.program_format, ort.quantized) == ("onnx", False)


def test_unknown_flow_names_the_known_ones() -> None:
    with pytest.raises(InputError) as raised:
        get_flow("tensorrt")
    assert str(raised.value) == (
        "unknown flow 'tensorrt' (known: eager, executorch_xnnpack, executorch_xnnpack_int8, "
        "onnxruntime_cpu)"
    )


def test_importing_the_registry_imports_no_backend() -> None:
    code = (
        "import sys, kit.flows as f; f.flow_names(); [f.get_flow(n) for n in f.flow_names()]; "
        "print(sorted(m for m in ('torch', 'executorch', 'onnxruntime', 'onnx') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_vendor_flow_registers_by_entry_point(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, monkeypatch, entry("acme_npu", "acme_ckit_flows:AcmeNpuFlow"))
    assert flow_names() == (*BUILTINS, "acme_npu")
    flow = get_flow("acme_npu")
    assert type(flow).__name__ == "AcmeNpuFlow"
    assert flow.name == "acme_npu"


def test_entry_point_clashing_with_builtin_is_refused(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, monkeypatch,
            entry("eager", "acme_ckit_flows:ClashingEagerFlow"))
    with pytest.raises(InputError) as raised:
        flow_names()
    assert str(raised.value) == (
        "distribution acme-ckit 1.0 registers flow 'eager' under ckit.flows, "
        "the name of a built-in flow"
    )


def test_broken_entry_point_names_its_distribution(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, monkeypatch,
            entry("acme_npu", "acme_ckit_missing_module:AcmeNpuFlow"))
    with pytest.raises(InputError) as raised:
        get_flow("acme_npu")
    assert str(raised.value) == (
        "flow 'acme_npu' of distribution acme-ckit 1.0 (acme_ckit_missing_module:AcmeNpuFlow) "
        "cannot be loaded (ModuleNotFoundError: No module named 'acme_ckit_missing_module')"
    )


def test_entry_point_naming_a_non_flow_is_refused(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, monkeypatch, entry("acme_plain", "acme_ckit_flows:NotAFlow"))
    with pytest.raises(InputError) as raised:
        flow_names()
    assert str(raised.value) == (
        "flow 'acme_plain' of distribution acme-ckit 1.0 (acme_ckit_flows:NotAFlow) "
        "is not a subclass of kit.flows.interface.Flow"
    )


def test_entry_point_under_another_name_than_its_flow_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path, monkeypatch, entry("acme_v2", "acme_ckit_flows:AcmeNpuFlow"))
    with pytest.raises(InputError) as raised:
        flow_names()
    assert str(raised.value) == (
        "flow 'acme_v2' of distribution acme-ckit 1.0 (acme_ckit_flows:AcmeNpuFlow) "
        "has name 'acme_npu', not its entry point's name"
    )


def test_two_distributions_registering_one_name_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path, monkeypatch, entry("acme_npu", "acme_ckit_flows:AcmeNpuFlow"))
    other = tmp_path / "other"
    other.mkdir()
    write_distribution(other, "zeta-ckit", "zeta_ckit_flows", VENDOR_FLOW_SOURCE,
                       entry("acme_npu", "zeta_ckit_flows:AcmeNpuFlow"))
    monkeypatch.syspath_prepend(str(other))
    with pytest.raises(InputError) as raised:
        get_flow("acme_npu")
    assert str(raised.value) == (
        "distribution zeta-ckit 1.0 registers flow 'acme_npu' under ckit.flows, "
        "already registered by distribution acme-ckit 1.0"
    )


def test_the_judge_loads_no_vendor_flow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, monkeypatch, entry("acme_npu", "acme_ckit_flows:AcmeNpuFlow"))
    monkeypatch.setenv(NO_VENDOR_CODE_VARIABLE, "1")
    monkeypatch.delitem(sys.modules, "acme_ckit_flows", raising=False)  # an earlier test's
    assert flow_names() == BUILTINS
    assert "acme_ckit_flows" not in sys.modules
    # A vendor flow is judged by the interface's default, a built-in by its own answer.
    assert [requires_delegation(name) for name in ("acme_npu", "eager", "onnxruntime_cpu")] == [
        True, False, True]
