"""The device half of a compile test: the unit case's call through ``torch.compile``.

Per claimed backend, in the worker (vendor code loaded): dynamo's caches are reset, the call is
compiled with the backend wrapped in a counter of the graphs it is handed, called on the
case's inputs (its result is the evidence the judge compares), then called again on a second
input shape (another OpInfo sample of the op with the same structure: the same argument kinds
and ranks, other sizes) to count recompilations. What is recorded, pass or fail, under
``details.compile`` (one entry per backend, ``CompileFacts``):

- ``graphs``: the graphs the backend compiled for the first call;
- ``graph_breaks``: the graph breaks dynamo counted in it;
- ``recompiles``: the graphs compiled again for the second shape (None: the op has no such
  sample); not judged (dynamic shapes are a backend's choice), recorded;
- ``stage``: where a failure happened: ``lookup`` (no backend of that name is registered),
  ``trace`` (dynamo or its fake-tensor propagation), ``backend`` (the backend's compiler),
  ``run`` (the compiled call). A failure before the call returned is ERROR with that stage
  (``CompileFailure``); an error of the compiled call itself keeps its own status (a device's
  ``NotImplementedError`` is UNSUPPORTED).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from typing import Any

import torch

from kit.context import KitContext
from kit.outcomes import KitOutcome
from kit.printable import printable
from kit.results import COMPILE_KEY
from kit.tiers.unit.checking import UnitCase, execute_case
from kit.tiers.unit.evidence import UnitEvidence

#: The stages a compiled call goes through, in order (``CompileFacts.stage``).
STAGES = ("lookup", "trace", "backend", "run")


@dataclass(frozen=True)
class CompileFacts:
    """What one backend's compilation of a test showed (``details.compile``)."""

    backend: str
    graphs: int = 0
    graph_breaks: int = 0
    recompiles: int | None = None
    #: The stage a failure happened at; None: the compiled calls returned.
    stage: str | None = None


class CompileFailure(KitOutcome, RuntimeError):
    """A compile that did not return a callable graph: ERROR, its stage in its message."""

    def __init__(self, facts: CompileFacts, cause: BaseException | str) -> None:
        what = cause if isinstance(cause, str) else f"{type(cause).__name__}: {_first(cause)}"
        super().__init__(f"torch.compile with backend {facts.backend!r} failed at the "
                         f"{facts.stage} stage: {what}")


def _first(exc: BaseException) -> str:
    return printable((str(exc).strip().splitlines() or [""])[0])[:300]


class GraphCounter:
    """A dynamo backend that counts the graphs handed to the one it wraps."""

    def __init__(self, backend: Callable[..., Any]) -> None:
        self.backend = backend
        self.graphs = 0

    def __call__(self, graph: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        self.graphs += 1
        return self.backend(graph, example_inputs)


#: A claimed backend's name and its compiler, as dynamo's registry gives it.
Claimed = tuple[str, Callable[..., Any]]


def claimed_backends(ckit: KitContext) -> list[Claimed]:
    """Each backend the vendor claims, looked up before any case is built: a name dynamo does
    not know ends the test at once (``lookup``)."""
    claimed: list[Claimed] = []
    for backend in ckit.vendor.compile_backends:
        facts = CompileFacts(backend)
        try:
            claimed.append((backend, _lookup(backend)))
        except CompileFailure:
            ckit.notes[COMPILE_KEY] = [asdict(replace(facts, stage="lookup"))]
            raise
    return claimed


def compiled_evidence(ckit: KitContext, claimed: list[Claimed], case: UnitCase,
                      second: UnitCase | None) -> dict[str, Any]:
    """The device half: each claimed backend's evidence, its facts noted as they are known."""
    runs: list[dict[str, object]] = []
    noted: list[dict[str, Any]] = []
    ckit.notes[COMPILE_KEY] = noted
    for backend, compiler in claimed:
        runs.append(_one_backend(ckit.device, case, second, backend, compiler, noted).to_tree())
    return {"runs": runs}


def _one_backend(device: str, case: UnitCase, second: UnitCase | None, backend: str,
                 compiler: Callable[..., Any], noted: list[dict[str, Any]]) -> UnitEvidence:
    note = fact_noter(backend, noted)
    counter = fresh_counter(compiler)
    compiled = torch.compile(lambda inputs: case.call(device, False, inputs), backend=counter)
    with staged(note):
        evidence = execute_case(device, replace(case, call=lambda d, u, i: compiled(i)))
    first = note(graphs=counter.graphs, graph_breaks=graph_breaks())
    if second is not None:
        with torch.no_grad(), staged(note):
            compiled(second.make_inputs(device, False))
        note(recompiles=counter.graphs - first.graphs)
    return evidence


def fact_noter(backend: str, noted: list[dict[str, Any]]) -> Callable[..., CompileFacts]:
    """A new entry of ``noted`` for ``backend``, and the function that updates it (the facts
    known so far are on the record, whatever the test ends in)."""
    facts = CompileFacts(backend)
    noted.append(asdict(facts))

    def note(**changes: Any) -> CompileFacts:
        nonlocal facts
        facts = replace(facts, **changes)
        noted[-1] = asdict(facts)
        return facts

    return note


def fresh_counter(compiler: Callable[..., Any]) -> GraphCounter:
    """A counter of ``compiler``'s graphs, dynamo's caches and counters reset: nothing an
    earlier compile left is counted or reused."""
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    return GraphCounter(compiler)


def _lookup(backend: str) -> Callable[..., Any]:
    from torch._dynamo.backends.registry import list_backends, lookup_backend

    try:
        return lookup_backend(backend)  # type: ignore[no-any-return]
    except Exception as exc:  # noqa: BLE001 - any refusal is the claimed name's fault
        registered = ", ".join(list_backends(exclude_tags=())) or "none"
        raise CompileFailure(CompileFacts(backend, stage="lookup"), f"no dynamo backend named "
                             f"{backend!r} is registered (registered: {registered})") from exc


def graph_breaks() -> int:
    """The graph breaks dynamo counted since the last reset."""
    return sum(torch._dynamo.utils.counters["graph_break"].values())


@contextmanager
def staged(note: Callable[..., CompileFacts]) -> Iterator[None]:
    """Name the stage of whatever the compiled call raises: dynamo's own errors are the
    compile's (ERROR), any other the call's, raised as it is."""
    from torch._dynamo.exc import BackendCompilerFailed, TorchDynamoException

    try:
        yield
    except BackendCompilerFailed as exc:
        raise CompileFailure(note(stage="backend"), exc.inner_exception) from exc
    except TorchDynamoException as exc:
        raise CompileFailure(note(stage="trace"), exc) from exc
    except Exception:
        note(stage="run")
        raise
