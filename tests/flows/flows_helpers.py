"""Shared pieces of the flow tests (imported by name: the test directory is on sys.path):
small real subjects, and real vendor distributions written to a temporary directory."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import torch

from kit.flows.interface import Subject


class LinearRelu(torch.nn.Module):
    """Ops every program flow's backend takes."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


class CumSum(torch.nn.Module):
    """An op XNNPACK does not take: the partitioner leaves it outside every delegate."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=1)


class DataDependentBranch(torch.nn.Module):
    """Python control flow on a tensor's value: torch.export cannot trace it."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum().item() > 0:
            return x + 1
        return x - 1


def subject(test_id: str, module_class: Callable[[], torch.nn.Module],
            shape: tuple[int, ...] = (2, 8)) -> Subject:
    """A subject whose weights and inputs are seeded: the same whatever ran before."""
    torch.manual_seed(0)
    module = module_class().eval()
    inputs = (torch.randn(*shape, generator=torch.Generator().manual_seed(1)),)
    return Subject(test_id, module, inputs)


def eager_output(item: Subject) -> torch.Tensor:
    with torch.no_grad():
        result: torch.Tensor = item.module(*item.inputs)
    return result


def write_distribution(root: Path, dist: str, module: str, source: str, entry_points: str) -> Path:
    """A real installed distribution: ``<module>.py`` and ``<dist>-1.0.dist-info`` under
    ``root``, found by ``importlib.metadata`` once ``root`` is on sys.path."""
    (root / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    info = root / f"{dist}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points), encoding="utf-8")
    return root


VENDOR_FLOW_SOURCE = """\
    from kit.flows.executorch_xnnpack import ExecutorchXnnpackFlow


    class AcmeNpuFlow(ExecutorchXnnpackFlow):
        name = "acme_npu"


    class ClashingEagerFlow(ExecutorchXnnpackFlow):
        name = "eager"


    class NotAFlow:
        name = "acme_plain"
"""
