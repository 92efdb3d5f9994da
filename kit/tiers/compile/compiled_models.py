"""A compiled model: the models tier's model of a test through ``torch.compile`` on the device.

``compile/models/<source>/<model>/eager`` and ``.../train`` (``kit.tiers.compile.compile_id``)
take the model the models tier builds for ``models/<source>/<model>/eager`` (or ``/train``),
move it to the device and compile it in place with each claimed backend wrapped in a
``GraphCounter`` (``module.compile``: the module and its parameters' names stay the same,
which the training judge reads), then run the models tier's own device half
(``kit.tiers.models.flows.eager_output``, ``kit.tiers.models.training.device_training``: the
loss, gradients and both optimizers' updates). The kit's judge decides by the models tier's
own judgement of that test (``judge_model_evidence``: ``judge_output`` / ``judge_training``
against the float64 CPU reference), once per backend. Every backend gets a fresh build: a
training step leaves gradients on the parameters it trained. A compiled training step leaves out
the parameters the loss does not reach (``off_the_loss_path``): the compiled backward, one
autograd node for the whole graph, hands them zeros (and AdamW's weight decay would then move
them) where eager autograd, and so the reference, leaves them without a gradient.

Facts (``details.compile``, ``kit.tiers.compile.compiled.CompileFacts``) as for an op: graphs
and graph breaks of the first call, the stage a compile failed at. Recompiles: a forward is
called again on the first batch row of each input (batch 1 for 2: dynamo specializes sizes 0
and 1, so that is always another graph); None where an input has a single row, and for a
training step, whose second input would compile a second backward too (the cost that rules
this tier, ``kit.tiers.compile.cases``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kit.context import KitContext
from kit.json_shape import RecordDetails
from kit.outcomes import ResultMismatch
from kit.results import COMPILE_KEY
from kit.standard import Standard
from kit.tiers.compile.compiled import (
    Claimed,
    CompileFacts,
    fact_noter,
    fresh_counter,
    graph_breaks,
    staged,
)
from kit.tiers.models.flows import call_module, eager_output, map_tensors
from kit.tiers.models.interface import BuiltModel, ModelCase, ModelInputs
from kit.tiers.models.training import device_training, forward_backward


def compiled_model_evidence(ckit: KitContext, claimed: list[Claimed], case: ModelCase,
                            build: Callable[[], BuiltModel]) -> dict[str, Any]:
    """The device half: each claimed backend's output (or training step) of a fresh build of
    ``case``'s model, its facts noted as they are known."""
    runs: list[Any] = []
    noted: list[dict[str, Any]] = []
    ckit.notes[COMPILE_KEY] = noted
    off_path = off_the_loss_path(build(), case) if case.training else frozenset()
    for backend, compiler in claimed:
        note = fact_noter(backend, noted)
        runs.append(_one_backend(ckit.device, case, build(), compiler, note, off_path))
    return {"runs": runs}


def off_the_loss_path(built: BuiltModel, case: ModelCase) -> frozenset[str]:
    """The parameters eager autograd leaves without a gradient in ``case``'s step, on the CPU
    (bert's pooler, when the loss reads the last hidden state): the model's structure, not its
    values. The compiled step leaves them out (``device_training``), so that it trains what
    the eager step and the reference train."""
    _, reached = forward_backward(built.module, built.inputs, case)
    names = {name for name, _ in reached}
    return frozenset(name for name, _ in built.module.named_parameters() if name not in names)


def _one_backend(device: str, case: ModelCase, built: BuiltModel, compiler: Callable[..., Any],
                 note: Callable[..., CompileFacts], off_path: frozenset[str]) -> Any:
    counter = fresh_counter(compiler)
    module = built.module.to(device)
    module.compile(backend=counter)
    with staged(note):
        if case.training:
            evidence = device_training(built, case, device, off_path)
        else:
            evidence = eager_output(built, case, device)
    first = note(graphs=counter.graphs, graph_breaks=graph_breaks())
    second = None if case.training else second_batch(built.inputs)
    if second is not None:
        with staged(note):
            call_module(module, map_tensors(second, lambda t: t.to(device)))
        note(recompiles=counter.graphs - first.graphs)
    return evidence


def second_batch(inputs: ModelInputs) -> ModelInputs | None:
    """The inputs' first batch row each (batch 1): another shape for dynamo's guards; None
    where an input has fewer than two rows."""
    tensors = list(inputs.values()) if isinstance(inputs, Mapping) else list(inputs)
    if any(t.dim() == 0 or t.shape[0] < 2 for t in tensors):
        return None
    return map_tensors(inputs, lambda t: t[:1])


def judge_compiled_model(standard: Standard, model_id: str, evidence: object) -> RecordDetails:
    """Each backend's run judged as the models tier judges ``model_id``'s; raises the first
    failure."""
    from kit.tiers.models.cases import judge_model_evidence

    if not isinstance(evidence, dict) or not isinstance(evidence.get("runs"), list):
        raise ResultMismatch("the device evidence is not a list of compiled runs")
    if not evidence["runs"]:
        raise ResultMismatch("the device evidence holds no compiled run")
    details: RecordDetails = {}
    for run in evidence["runs"]:
        details.update(judge_model_evidence(standard, model_id, run))
    return details


def run_compiled_model(ckit: KitContext, claimed: list[Claimed], model_id: str) -> None:
    """Run one compiled model: the device half here; the judge decides (``kit.execution``)."""
    from kit.execution import run_split
    from kit.tiers.models.cases import find_case, usable_source

    case = find_case(ckit.standard, model_id)
    source = usable_source(ckit, case)
    details = run_split(
        ckit.evidence_path,
        lambda: compiled_model_evidence(ckit, claimed, case, lambda: source.build(case)),
        lambda evidence: judge_compiled_model(ckit.standard, model_id, evidence),
    )
    ckit.notes.update(details or {})
