"""Deploy tier: the vendor stack imports, keeps the pinned torch, is consistent, sees its device,
computes one op right and runs one exported program.

torch is imported inside the tests, never at module level: a recipe that broke or replaced torch
must fail ``deploy/torch-pinned`` and friends with a reason, not break collection of the tier.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import subprocess
import sys
from typing import Any

import pytest

import kit
from kit.context import KitContext
from kit.device import DeviceInfo
from kit.tiers.deploy import DeployCheckFailed


def case(test_id: str) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("case", [test_id], ids=[test_id])


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"


@case("deploy/imports")
def test_imports(case: str, ckit: KitContext) -> None:
    failures = []
    for module in ("torch", *ckit.vendor.import_modules):
        try:
            importlib.import_module(module)
        except Exception as exc:  # any failure to import is what this test reports
            failures.append(f"{module!r} ({_first_line(exc)})")
    if failures:
        raise DeployCheckFailed(f"cannot import {'; '.join(failures)}")


@case("deploy/torch-pinned")
def test_torch_pinned(case: str, ckit: KitContext) -> None:
    import torch

    running = str(torch.__version__)
    if running.split("+", 1)[0] != kit.TORCH_RELEASE:
        raise DeployCheckFailed(
            f"torch {running} is installed ({torch.__file__}); standard "
            f"{ckit.standard.version} needs torch {kit.TORCH_RELEASE} (a local build "
            f"suffix such as +cpu is allowed): did a vendor recipe replace torch?"
        )
    installed = importlib.metadata.version("torch")
    if installed != running:
        raise DeployCheckFailed(
            f"the torch module says {running} but the installed distribution is {installed}: "
            f"a module shadows the installed torch ({torch.__file__})"
        )


@case("deploy/pip-check")
def test_pip_check(case: str, ckit: KitContext) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pip", "check"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if result.returncode != 0:
        lines = [ln.strip() for ln in (result.stdout + result.stderr).splitlines() if ln.strip()]
        raise DeployCheckFailed(
            f"`pip check` found {len(lines)} problem(s): {'; '.join(lines[:3])}"
        )


@case("deploy/device-visible")
def test_device_visible(case: str, ckit: KitContext) -> None:
    info = _device_info(ckit)
    if info.count < 1:
        raise DeployCheckFailed(f"device {info.type!r} reports {info.count} devices")
    print(f"{info.count} x {info.type}: {info.name}")


def _device_info(ckit: KitContext) -> DeviceInfo:
    """What the plugin found when enabling the device; its problem, if any, fails the test."""
    if ckit.device_problem or ckit.device_info is None:
        raise DeployCheckFailed(ckit.device_problem or "the device was not enabled")
    return ckit.device_info


def _require_on_device(result: Any, device_type: str, where: str) -> None:
    from kit.outcomes import ResultMismatch

    if result.device.type != device_type:
        raise ResultMismatch(f"{where}: computed on {result.device}, not on {device_type}")


@case("deploy/smoke-op")
def test_smoke_op(case: str, ckit: KitContext) -> None:
    import torch

    from kit.compare import assert_close

    device = _device_info(ckit).type
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(32, 48, generator=generator)
    b = torch.randn(48, 16, generator=generator)
    expected = torch.relu(a.double() @ b.double()) + 1
    actual = torch.relu(a.to(device) @ b.to(device)) + 1
    _require_on_device(actual, device, "relu(a @ b) + 1")
    assert_close(actual, expected, ckit.tolerance("float32"), where="relu(a @ b) + 1")


def _tiny_model() -> Any:
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4)
    ).eval()


@case("deploy/export-run")
def test_export_run(case: str, ckit: KitContext) -> None:
    import copy

    import torch

    from kit.compare import assert_close

    device = _device_info(ckit).type
    model = _tiny_model()
    x = torch.randn(8, 16, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = copy.deepcopy(model).double()(x.double())
        exported = torch.export.export(model, (x,))
        actual = exported.module().to(device)(x.to(device))
    _require_on_device(actual, device, "exported program output")
    assert_close(actual, expected, ckit.tolerance("float32"), where="exported program output")
