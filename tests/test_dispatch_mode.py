"""The kit's dispatch modes (``kit.dispatch_mode``): an eager process never imports Dynamo for
them, and once something compiles they behave as torch's own modes do under ``torch.compile``."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from kit.dispatch_mode import EagerDispatchMode

#: A unit run's preloads, then each kit mode once, as a worker and a judge use them.
EAGER_PROCESS = """
import sys
import kit.tiers.unit.opinfo_database, kit.tiers.unit.cases, kit.tiers.unit.opinfo_cases
import torch
from kit.attribution.check import cpu_dispatched
from kit.attribution.recorder import DispatchLog, recording
from kit.aten_trace import ops_called
from kit.tiers.unit.random_draws import RandomDraws
x = torch.ones(3)
assert "aten::add.Tensor" in cpu_dispatched(lambda: x + x)
with recording(DispatchLog("cpu")):
    x.mul(2)
assert ops_called(lambda: x.sin())
with RandomDraws() as draws:
    torch.rand(2)
assert draws.drew
print("torch._dynamo" in sys.modules)
"""


def test_an_eager_process_never_imports_dynamo() -> None:
    done = subprocess.run([sys.executable, "-c", EAGER_PROCESS], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"


def _ops_seen_compiling(base: type[TorchDispatchMode]) -> tuple[list[str], int, list[float]]:
    """The ops a mode of ``base`` sees while a compiled function runs under it, the graphs
    Dynamo made, and the result."""
    seen: list[str] = []

    class Seeing(base):  # type: ignore[misc, valid-type]
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    graphs: list[object] = []

    def counting(graph: Any, example_inputs: Any) -> Any:
        graphs.append(graph)
        return graph.forward

    import torch._dynamo as dynamo

    dynamo.reset()
    compiled = torch.compile(lambda t: (t * 2).sin() + 1, backend=counting)
    with Seeing():
        result = compiled(torch.ones(3))
    return seen, len(graphs), result.tolist()


def test_under_compile_a_kit_mode_behaves_as_torchs_own() -> None:
    assert _ops_seen_compiling(EagerDispatchMode) == _ops_seen_compiling(TorchDispatchMode)
