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
from collections.abc import Callable
from typing import Any

import pytest

from kit.context import KitContext
from kit.device import DeviceInfo
from kit.tiers.deploy.cases import (
    EXPORT_RUN,
    SMOKE_OP,
    DeployCheckFailed,
    export_input,
    judge_deploy_evidence,
    smoke_inputs,
    smoke_op,
    tiny_model,
)


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
    if running.split("+", 1)[0] != ckit.standard.torch_release:
        raise DeployCheckFailed(
            f"torch {running} is installed ({torch.__file__}); standard "
            f"{ckit.standard.version} needs torch {ckit.standard.torch_release} (a local build "
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
        raise ResultMismatch(f"{where}: computed on {result.device}, not on {device_type}",
                             failure="wrong-device")


@case(SMOKE_OP)
def test_smoke_op(case: str, ckit: KitContext) -> None:
    device = _device_info(ckit).type

    def execute() -> Any:
        a, b = smoke_inputs()
        actual = smoke_op(a.to(device), b.to(device))
        _require_on_device(actual, device, "relu(a @ b) + 1")
        return actual

    _run_split(ckit, execute, SMOKE_OP)


@case(EXPORT_RUN)
def test_export_run(case: str, ckit: KitContext) -> None:
    import torch

    device = _device_info(ckit).type

    def execute() -> Any:
        x = export_input()
        with torch.no_grad():
            exported = torch.export.export(tiny_model(), (x,))
            actual = exported.module().to(device)(x.to(device))
        _require_on_device(actual, device, "exported program output")
        return actual

    _run_split(ckit, execute, EXPORT_RUN)


def _run_split(ckit: KitContext, execute: Callable[[], Any], test_id: str) -> None:
    """Execute here; judge here under plain pytest, or in the kit's judge under ``ckit run``."""
    from kit.execution import run_split  # imports torch: not at collection (see above)

    def judge(evidence: Any) -> Any:
        return judge_deploy_evidence(ckit.standard, test_id, evidence)

    run_split(ckit.evidence_path, execute, judge)
