"""Running unit cases in-process: applicability, error classification and determinism."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from unit_helpers import TODAY, cpu_context

from kit import paths
from kit.context import KitContext
from kit.errors import InputError
from kit.outcomes import (
    NOT_APPLICABLE_PREFIX,
    NumericMismatch,
    ResultMismatch,
    classify_exception,
)
from kit.pytest_plugin import build_context
from kit.results import Status
from kit.tiers.unit.cases import run_unit_case
from kit.tiers.unit.checking import ReferenceFailure, UnitCase, check_case
from kit.tiers.unit.entries import Comparison

DIGEST_SCRIPT = """
import hashlib, torch
from kit.standard import load_standard
from kit.tiers.unit.config import load_unit_config
from kit.tiers.unit.opinfo_cases import selected_samples
from kit.tiers.unit.trees import map_tensors

def digest(keys):
    config = load_unit_config(load_standard())
    h = hashlib.sha256()
    for key, dtype in keys:
        samples = selected_samples(config, config.op(key), dtype)
        for index, sample in sorted(samples.items()):
            leaves = []
            map_tensors((sample.input, sample.args, sample.kwargs), leaves.append)
            plain = map_tensors((sample.args, sample.kwargs), lambda t: "tensor")
            h.update(f"{key}/{dtype}/{index}/{plain!r}".encode())
            for t in leaves:
                h.update(str((t.dtype, tuple(t.shape))).encode())
                h.update(t.contiguous().view(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()
"""
DIGESTED = [
    ("add", "float32"),
    ("nn.functional.nll_loss", "float16"),
    ("sort", "int64"),
    ("nn.functional.embedding_bag", "bfloat16"),
]


def test_opinfo_samples_are_identical_in_a_fresh_process() -> None:
    namespace: dict[str, object] = {}
    exec(DIGEST_SCRIPT, namespace)  # noqa: S102 - the same code runs in both processes
    here = namespace["digest"](DIGESTED)  # type: ignore[operator]
    # A different process, where other RNG draws happen first.
    disturb = "import random, torch; torch.rand(7); random.random()"
    code = f"{disturb}\n{DIGEST_SCRIPT}\nprint(digest({DIGESTED!r}))"
    there = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout.strip()
    assert here == there


def test_sample_generation_leaves_global_rng_state_alone() -> None:
    from kit.tiers.unit.samples import _samples

    _samples.cache_clear()
    torch.manual_seed(1234)
    expected = torch.rand(3)
    torch.manual_seed(1234)
    run_unit_case(cpu_context(), "unit/opinfo/nn.functional.cross_entropy/float32/0")
    assert torch.equal(torch.rand(3), expected)


def test_unclaimed_dtype_is_not_applicable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vendor_dir = tmp_path / "cpu-float32-only"
    shutil.copytree(paths.vendors_dir() / "cpu", vendor_dir)
    profile = (vendor_dir / "vendor.yaml").read_text()
    profile = profile.replace("id: cpu", "id: cpu-float32-only")
    profile = profile.replace(
        "dtypes: [float32, float64, bfloat16, float16, int64, int32, bool]", "dtypes: [float32]"
    )
    (vendor_dir / "vendor.yaml").write_text(profile)
    monkeypatch.setenv("CKIT_VENDORS_DIR", str(tmp_path))
    ckit = build_context("cpu-float32-only", TODAY)

    run_unit_case(ckit, "unit/opinfo/mul/float32/0")
    for test_id in (
        "unit/opinfo/mul/bfloat16/0",
        "unit/opspec/layer_norm_module/float16/odd-eps1e-05-affineTrue",
    ):
        with pytest.raises(pytest.skip.Exception) as skipped:
            run_unit_case(ckit, test_id)
        assert str(skipped.value.msg).startswith(NOT_APPLICABLE_PREFIX)


def other_device_context() -> KitContext:
    """The CPU context with a second device name, so a case's invoke can tell the device call
    from the CPU reference calls (it answers the device call itself)."""
    ckit = cpu_context()
    return dataclasses.replace(ckit, vendor=dataclasses.replace(ckit.vendor, device_type="meta"))


def case_of(
    invoke: Callable[[str, bool], Any], dtype: str, comparison: Comparison, label: str
) -> UnitCase:
    """A case without inputs whose call answers per device."""
    return UnitCase(label, dtype, comparison, lambda d, u: ((), {}), lambda d, u, _: invoke(d, u))


def test_device_error_propagates_for_the_plugin_to_classify() -> None:
    def invoke(device: str, upcast: bool) -> torch.Tensor:
        if device == "meta":
            raise NotImplementedError("'add' not implemented for 'meta'")
        return torch.ones(2, dtype=torch.float64 if upcast else torch.float32)

    with pytest.raises(NotImplementedError) as caught:
        check_case(other_device_context(), case_of(invoke, "float32", Comparison(), "add"))
    assert classify_exception(caught.value) is Status.UNSUPPORTED


@pytest.mark.parametrize(("error_in_ulps", "passes"), [(2.0, True), (8.0, False)])
def test_device_result_is_held_to_the_output_dtype_bound(
    error_in_ulps: float, passes: bool
) -> None:
    """The elementwise class allows 4 ulps of float32 around the reference."""
    ckit = other_device_context()
    exact = torch.tensor([1.0, 2.0, -3.0], dtype=torch.float64)
    eps = torch.finfo(torch.float32).eps

    def invoke(device: str, upcast: bool) -> torch.Tensor:
        if device == "meta":
            return (exact * (1 + error_in_ulps * eps)).float()
        return exact if upcast else exact.float()

    comparison = Comparison(op_class="elementwise")
    if passes:
        measurements = check_case(ckit, case_of(invoke, "float32", comparison, "x"))
        assert 0 < measurements[0].ratio <= 1
        assert ckit.notes["bound"]["class"] == "elementwise"
    else:
        with pytest.raises(NumericMismatch, match="3/3 elements outside the bound") as caught:
            check_case(ckit, case_of(invoke, "float32", comparison, "x"))
        assert caught.value.details()["ratio_to_bound"] > 1


def test_device_result_in_another_dtype_is_a_mismatch() -> None:
    def invoke(device: str, upcast: bool) -> torch.Tensor:
        values = torch.ones(2, dtype=torch.float64)
        return values.half() if device == "meta" else (values if upcast else values.float())

    with pytest.raises(
        ResultMismatch, match="dtype changed: expected torch.float32, got torch.float16"
    ):
        check_case(other_device_context(), case_of(invoke, "float32", Comparison(), "x"))


def test_compare_outputs_ignores_unspecified_tie_indices() -> None:
    values = torch.tensor([2.0, 2.0, 1.0])

    def invoke(device: str, upcast: bool) -> tuple[torch.Tensor, torch.Tensor]:
        indices = torch.tensor([1, 0, 2]) if device == "meta" else torch.tensor([0, 1, 2])
        return (values.double() if upcast else values, indices)

    ckit = other_device_context()
    check_case(ckit, case_of(invoke, "float32", Comparison(compare_outputs=(0,)), "sort"))
    with pytest.raises(AssertionError):
        check_case(ckit, case_of(invoke, "float32", Comparison(), "sort"))


def test_reference_failure_is_a_kit_error_even_if_it_reads_like_unsupported() -> None:
    def invoke(device: str, upcast: bool) -> torch.Tensor:
        raise RuntimeError("\"addmm_impl_cpu_\" not implemented for 'Half'")

    with pytest.raises(ReferenceFailure) as caught:
        check_case(cpu_context(), case_of(invoke, "float16", Comparison(), "addmm sample 0"))
    assert classify_exception(caught.value) is Status.ERROR
    assert "CPU" in str(caught.value) and "\n" not in str(caught.value)


def test_locked_id_without_sample_is_one_line_error() -> None:
    with pytest.raises(InputError, match="no such sample") as caught:
        run_unit_case(cpu_context(), "unit/opinfo/add/float32/9999")
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "forged_id",
    [
        "unit/opinfo/add/float32",
        "unit/opinfo/os.system/float32/0",
        "unit/other/add/float32/0",
        "unit/opinfo/add/complex64/0",
    ],
)
def test_forged_ids_are_rejected_with_one_line(forged_id: str) -> None:
    with pytest.raises(InputError) as caught:
        run_unit_case(cpu_context(), forged_id)
    assert "\n" not in str(caught.value)
