"""Flows as vendor profiles and options see them: claimed names, options, availability."""

from __future__ import annotations

from pathlib import Path

import pytest
from flows_helpers import VENDOR_FLOW_SOURCE, write_distribution

from kit.cli import main
from kit.errors import ExitCode
from kit.flows import ENTRY_POINT_GROUP, get_flow
from kit.flows.executorch_xnnpack import ExecutorchXnnpackFlow
from kit.vendors import load_vendor

PROFILE = """\
id: acme
display_name: Acme NPU
contact: Acme Conformance <conformance@acme.example>
docs_url: https://acme.example/docs
device_type: cpu
import_modules: []
requirements: []
dtypes: [float32]
flows: {flows}
skip_manifest: skips.yaml
"""


class AbsentBackendFlow(ExecutorchXnnpackFlow):
    """A real flow whose backend package is not installed here."""

    name = "absent_backend"
    packages = ("ckit_absent_backend_pkg",)


def write_profile(root: Path, flows: str) -> Path:
    directory = root / "acme"
    directory.mkdir()
    (directory / "vendor.yaml").write_text(PROFILE.format(flows=flows), encoding="utf-8")
    (directory / "skips.yaml").write_text("skips: []\n", encoding="utf-8")
    return directory


def test_profile_claiming_an_unknown_flow_is_refused_at_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = write_profile(tmp_path, "[eager, tensorrt]")
    code = main(["vendors", "validate", str(directory)])
    assert code == ExitCode.INPUT_ERROR
    assert capsys.readouterr().err.strip().endswith(
        "vendor.yaml: flows.1: expected one of eager, executorch_xnnpack, "
        "executorch_xnnpack_int8, onnxruntime_cpu, got 'tensorrt'"
    )


def test_profile_claims_builtin_program_flows(tmp_path: Path) -> None:
    flows = "[eager, executorch_xnnpack, executorch_xnnpack_int8, onnxruntime_cpu]"
    vendor = load_vendor(write_profile(tmp_path, flows))
    assert vendor.flows == ("eager", "executorch_xnnpack", "executorch_xnnpack_int8",
                            "onnxruntime_cpu")


def test_profile_claims_a_vendor_flow_registered_by_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    write_distribution(site, "acme-ckit", "acme_ckit_flows", VENDOR_FLOW_SOURCE,
                       f"[{ENTRY_POINT_GROUP}]\nacme_npu = acme_ckit_flows:AcmeNpuFlow\n")
    monkeypatch.syspath_prepend(str(site))
    vendor = load_vendor(write_profile(tmp_path, "[acme_npu]"))
    assert vendor.flows == ("acme_npu",)


def test_onnxruntime_options_name_the_unknown_key() -> None:
    flow = get_flow("onnxruntime_cpu")
    assert flow.option_problem({}) is None
    assert flow.option_problem({"execution_provider": "AcmeExecutionProvider"}) is None
    assert flow.option_problem({"execution_provider": "X", "threads": 4}) == (
        "flow onnxruntime_cpu has no option 'threads' (it takes: execution_provider)"
    )
    assert flow.option_problem({"execution_provider": ""}) == (
        "flow onnxruntime_cpu: option execution_provider must be a provider's name"
    )


def test_xnnpack_flows_take_no_options() -> None:
    for name in ("executorch_xnnpack", "executorch_xnnpack_int8"):
        assert get_flow(name).option_problem({}) is None
        assert get_flow(name).option_problem({"partitioner": "all"}) == (
            f"flow {name} has no option 'partitioner' (it takes: none)"
        )


def test_builtin_flows_are_available_here() -> None:
    for name in ("eager", "executorch_xnnpack", "executorch_xnnpack_int8", "onnxruntime_cpu"):
        assert get_flow(name).unavailable_reason() is None


def test_flow_with_absent_backend_says_which_package() -> None:
    assert AbsentBackendFlow().unavailable_reason() == (
        "ckit_absent_backend_pkg is not installed (flow absent_backend)"
    )
