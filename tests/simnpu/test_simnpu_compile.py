"""simnpu's dynamo backend compiles calls whose tracing meets simnpu's Python run with dispatch
excluded (a per-op kernel, the generator's state) and models with in-place residuals, and a
process that never compiles never loads dynamo."""

from __future__ import annotations

import subprocess
import sys

import pytest
import simnpu  # noqa: F401  (registers the device)
import torch

from kit.standard import load_standard
from kit.tiers.compile.cases import compiled_case

#: Advanced indexing lifts its index onto the device through a per-op kernel; attention saves
#: and restores the device's generator while dynamo traces it (18 s of AOTAutograd: heavy).
THROUGH_EXCLUDED_DISPATCH = [
    "compile/opinfo/__getitem__/float32/0",
    pytest.param("compile/opinfo/nn.functional.scaled_dot_product_attention/float32/0",
                 marks=pytest.mark.heavy),
]


@pytest.mark.parametrize("test_id", THROUGH_EXCLUDED_DISPATCH)
def test_the_simnpu_backend_compiles_calls_through_excluded_dispatch(test_id: str) -> None:
    case = compiled_case(load_standard("v2"), test_id)
    inputs = case.make_inputs("simnpu", False)
    torch._dynamo.reset()
    compiled = torch.compile(lambda: case.call("simnpu", False, inputs), backend="simnpu")()
    expected = case.call("cpu", False, case.make_inputs("cpu", False))
    torch.testing.assert_close(compiled.cpu(), expected)


class _Residual(torch.nn.Module):
    """A residual block's in-place updates (``hidden_state += residual`` in a ResNet)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.conv(x)
        h += x
        h -= 0.5 * x
        h *= 2
        h /= 3
        return h


def _index_grid(x: torch.Tensor) -> torch.Tensor:
    """What a Hugging Face attention mask does: a range made on the input's device, indexed."""
    rows = torch.arange(x.shape[0], device=x.device)
    return x + rows[:, None].float()


def test_a_view_of_a_tensor_made_on_simnpu_inside_the_graph_compiles() -> None:
    """dynamo runs such a range as a fake simnpu tensor, and a view of it detaches a meta tensor
    on simnpu's key: that recursed to Python's limit (so no Hugging Face text model compiled)
    while simnpu registered a Python kernel for ``detach``."""
    x = torch.ones(2, 3)
    torch._dynamo.reset()
    compiled = torch.compile(_index_grid, backend="simnpu")(x.to("simnpu"))
    torch.testing.assert_close(compiled.cpu(), _index_grid(x))


def test_in_place_operators_on_simnpu_tensors_compile() -> None:
    """dynamo recursed to Python's limit resolving ``+=`` on simnpu's tensor subclass (which it
    cannot trace) until ``SimTensor`` spelled the in-place operators as their ops."""
    torch.manual_seed(0)
    block, x = _Residual().eval(), torch.randn(2, 3, 8, 8)
    torch._dynamo.reset()
    with torch.no_grad():
        expected = block(x)
        compiled = torch.compile(block.to("simnpu"), backend="simnpu")(x.to("simnpu"))
    torch.testing.assert_close(compiled.cpu(), expected)


def test_importing_simnpu_does_not_load_dynamo() -> None:
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, torch, simnpu; print('torch._dynamo' in sys.modules)"],
        capture_output=True, text=True, check=True, timeout=120,
    ).stdout.strip()
    assert loaded == "False"
