"""The compile tier: OpInfo samples of core ATen ops, and every model of the models tier (its
forward and its training step), through ``torch.compile`` on the device.

Stable ids are ``compile/<unit id without "unit/">`` (``compile/opinfo/sin/float32/0``) and
``compile/<models id>`` (``compile/models/hf/resnet/eager``, ``.../train``;
``kit.tiers.compile.compile_id``): the unit test's call, or the models test's model
(``kit.tiers.compile.compiled_models``), compiled with each dynamo backend the vendor's profile
claims (``compile_backends``). The call is the unit tier's (``UnitCase``) and
so is the judgement: the device's result against the float64 CPU reference under the
standard's error model (``kit.tiers.unit.checking.judge_case``), in the kit's judge. What only
the compiling process sees (graphs, graph breaks, recompilations on a second input shape, the
stage a compile failed at) the worker records as ``details.compile``
(``kit.tiers.compile.compiled``).

Which tests: sample 0 in float32 of each of the unit tier's OpInfo ops (146 on torch 2.13.0:
the 76 core ATen ops the unit list covers and every op the models use; ``ckit standard lock``
decides, the suite reads the locked list). Judged under the standard's floor class for
compiled results (``compiled_case``; NUMERICS.md, "Compiled graphs"). Inductor on the CPU
compiles C++ for every graph: measured on the 2-core machine (idle, an empty Inductor cache),
``ckit run --vendor cpu --tier compile`` takes 276 s wall for the 146 (235 s user; the 76 core
ops alone 180 s, 139 s on torch 2.14.1), simnpu's backend 634 s, cppnpu's 79 s. Until standard
v2's complete runs left CI (the heavy suite runs a sixteenth of each, ``make test-full`` the
whole), the tier held twelve core ops, under a minute of a complete cpu run that ``.ci/run``
paid twice; now a complete cpu run pays about four and a half minutes, a sixteenth about twenty
seconds.
Samples whose call draws random numbers are left out (the device draws its own).

Which models: every model of the models tier, each its forward (``eager``) and its training
step (``train``) where the models tier has one: ``compiled_model_ids``, from the tier's locked
list, so a model the models tier gains is compiled too (the optional sources' models, TIMM's and
TorchBench's, are NOT_APPLICABLE where their package is absent, as in the models tier). A whole
model is Inductor's dearest graph: ``bench/compiled_model_cost.py`` measured each Hugging Face
model on the 2-core Intel machine, each in a process of its own with an empty Inductor cache
(Inductor's loading included): forward 12-21 s, its recompile at batch 1 3-11 s, the training
step 8-27 s (T5's and Whisper's the dearest); the twelve together 386 s (ResNet 23 s,
bert 29 s, Whisper 58 s). ``ckit run --tier compile --select 'compile/models/**'`` takes
213 s wall on cpu, 262 s on simnpu, 43 s on cppnpu (2 workers); each passes all 24.
Until 2026-12-01 the tier compiled ResNet alone, from a figure for bert (211 s) measured under
load. simnpu's backend compiles each model as graphs between graph breaks at each op on its
Python tensor (85 breaks in ResNet's forward), since its tensor spells ``+=`` as ``add_``
(dynamo recursed on the operator's C slot before) and has no Python ``detach`` kernel (a fake
simnpu tensor's view recursed through it: no text model compiled before).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from kit.standard import Standard
from kit.test_ids import TestId
from kit.tiers.compile.compile_id import compile_test_id, model_id_of, unit_id_of
from kit.tiers.models.segments import EAGER, TRAIN
from kit.tiers.unit.unit_id import UnitId

if TYPE_CHECKING:
    from kit.context import KitContext
    from kit.json_shape import RecordDetails
    from kit.tiers.unit.checking import UnitCase
    from kit.tiers.unit.evidence import UnitEvidence

#: The one dtype and sample compiled: the unit tier's first float32 sample of each op.
COMPILED_DTYPE = "float32"
COMPILED_SAMPLE = "0"


def all_test_ids(standard: Standard) -> list[str]:
    """Every compile test id of ``standard``: what ``ckit standard lock`` writes."""
    ops = [compile_test_id(unit_id) for unit_id in compiled_unit_ids(standard)]
    return sorted(ops + compiled_model_ids(standard))


def compiled_model_ids(standard: Standard) -> list[str]:
    """The compiled models' ids: each locked model test of the eager path (``.../eager``) and
    each locked training step (``.../train``), in the locked list's order."""
    locked = standard.test_ids("models")
    return [compile_test_id(i) for i in locked if TestId.split(i).last in (EAGER, TRAIN)]


def compiled_unit_ids(standard: Standard) -> list[str]:
    """The unit tier's float32 sample-0 OpInfo tests, sorted, none of them drawing random
    numbers: one per op of the unit list, which holds the core ATen ops it covers and every op
    the models use."""
    from kit.tiers.unit.cases import OPINFO_PREFIX
    from kit.tiers.unit.locked_ids import RANDOM_DRAWS

    ids = [i for i in standard.test_ids("unit") if i.startswith(OPINFO_PREFIX)
           and UnitId.of(i).dtype == COMPILED_DTYPE and UnitId.of(i).sample == COMPILED_SAMPLE]
    return sorted(i for i in ids if not RANDOM_DRAWS.holds(standard, i))


def compiled_case(standard: Standard, test_id: str) -> UnitCase:
    """The unit case a compile test compiles: called once, its values alone judged (no repeat
    call, no facts of views or ``out=``: what a compiled graph returns is judged by value), at
    least by the standard's class for compiled results (``numerics.compiled.least_class``)."""
    from kit.tiers.unit.cases import unit_case_called_once

    case = unit_case_called_once(standard, unit_id_of(test_id))
    least = standard.numerics.compiled_least_class
    comparison = case.comparison if least is None else case.comparison.at_least(least)
    return replace(case, observe=None, repeat=None, comparison=comparison)


def judge_compiled(standard: Standard, test_id: str, evidence: object) -> RecordDetails:
    """The figures of the worst backend's result; raises the first backend's failure (a
    compiled model: as the models tier judges it, ``kit.tiers.compile.compiled_models``)."""
    from kit.numerics.comparison import Measurement
    from kit.outcomes import ResultMismatch, numerics_details, worst_of
    from kit.tiers.unit.checking import cpu_references, judge_case

    model_id = model_id_of(test_id)
    if model_id is not None:
        from kit.tiers.compile.compiled_models import judge_compiled_model

        return judge_compiled_model(standard, model_id, evidence)
    runs = _runs_of(evidence)
    case = compiled_case(standard, test_id)
    references = cpu_references(case)
    measurements: list[Measurement] = []
    for run in runs:
        measurements += judge_case(standard, case, run, references)
    if not runs:
        raise ResultMismatch("the device evidence holds no compiled call")
    worst = worst_of(measurements)
    return numerics_details([worst] if worst is not None else [])


def _runs_of(evidence: object) -> list[UnitEvidence]:
    """Each claimed backend's call, in claim order; ``ResultMismatch`` for another shape."""
    from kit.outcomes import ResultMismatch
    from kit.tiers.unit.evidence import UnitEvidence

    if not isinstance(evidence, dict) or not isinstance(evidence.get("runs"), list):
        raise ResultMismatch("the device evidence is not a list of compiled calls")
    return [UnitEvidence.from_tree(run) for run in evidence["runs"]]


def second_shape_case(standard: Standard, test_id: str) -> UnitCase | None:
    """The op's first other OpInfo sample (in the test's dtype) whose arguments have the same
    structure as the compiled one's (the same non-tensor values, tensors of the same dtypes) and
    other tensor shapes: a call dynamo's guards send to a recompilation. None where
    the op has none."""
    from kit.tiers.unit.config import load_unit_config
    from kit.tiers.unit.samples import call_arguments, opinfo_samples, sample_case

    unit = UnitId.of(unit_id_of(test_id))
    entry = load_unit_config(standard).op(unit.op)
    samples = opinfo_samples(entry, unit.dtype)
    first = call_arguments(samples[int(unit.sample)])
    for position, sample in enumerate(samples):
        arguments = call_arguments(sample)
        if _structure(arguments) == _structure(first) and _sizes(arguments) != _sizes(first):
            return replace(sample_case(entry, unit.dtype, sample, f"{entry.key} sample "
                                       f"{position}"), observe=None, repeat=None)
    return None


def _structure(arguments: object) -> str:
    from kit.tiers.unit.trees import map_tensors

    return repr(map_tensors(arguments, lambda t: f"<tensor {t.dtype}>"))


def _sizes(arguments: object) -> list[tuple[int, ...]]:
    from kit.tiers.unit.trees import tensor_leaves

    return [tuple(tensor.shape) for _, tensor in tensor_leaves(arguments)]


def run_compile_case(ckit: KitContext, test_id: str) -> None:
    """Run one compile test: the device half here; the judge decides (``kit.execution``)."""
    from kit.applicability import unclaimed_compile_backend
    from kit.execution import run_split
    from kit.outcomes import not_applicable
    from kit.tiers.compile.compiled import claimed_backends, compiled_evidence

    unclaimed = unclaimed_compile_backend(ckit.vendor)
    if unclaimed is not None:  # plain pytest: ``ckit run`` decided it before (``CompileTier``)
        not_applicable(unclaimed.reason, unclaimed.words)
    claimed = claimed_backends(ckit)
    model_id = model_id_of(test_id)
    if model_id is not None:
        from kit.tiers.compile.compiled_models import run_compiled_model

        run_compiled_model(ckit, claimed, model_id)
        return
    case = compiled_case(ckit.standard, test_id)
    ckit.require_dtype(case.dtype)
    second = second_shape_case(ckit.standard, test_id)
    details = run_split(
        ckit.evidence_path,
        lambda: compiled_evidence(ckit, claimed, case, second),
        lambda evidence: judge_compiled(ckit.standard, test_id, evidence),
    )
    ckit.notes.update(details or {})
