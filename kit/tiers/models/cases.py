"""The model tier: whole models from several sources, run on the vendor device per flow.

Stable ids are ``models/<source>/<model>/<flow>`` (``models/hf/llama/eager``). The cases come from
the standard's ``models.yaml``; a standard with a training budget (``numerics.training``) adds
each eager model's training step, ``models/<source>/<model>/train`` (``training.py``). Optional
sources (TIMM, TorchBench) keep their cases in the standard and end NOT_APPLICABLE with the
reason where their package is absent, never PASS.
Reading the standard imports no model package: they are imported when a model is built.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kit.context import KitContext
from kit.errors import InputError
from kit.execution import run_split
from kit.flows import flow_names
from kit.outcomes import KitOutcome, not_applicable
from kit.results import PERFORMANCE_KEY, NotApplicableReason
from kit.standard import Standard
from kit.tiers.models.config import ModelsConfig, load_models_config
from kit.tiers.models.flows import FLOWS, judge_output
from kit.tiers.models.hf import HuggingFaceSource
from kit.tiers.models.interface import BuiltModel, ModelCase, ModelSource
from kit.tiers.models.segments import EAGER, TRAIN
from kit.tiers.models.timm_source import TimmSource
from kit.tiers.models.torchbench import TorchBenchSource
from kit.tiers.models.training import device_training
from kit.tiers.models.training_judge import judge_training

if TYPE_CHECKING:
    from kit.golden import GoldenWriter
    from kit.json_shape import RecordDetails
    from kit.numerics.criteria import Criterion

TIER = "models"
#: The dtype every model of the tier is built and run in on the device.
MODEL_DTYPE = "float32"

SOURCES: dict[str, ModelSource] = {
    source.name: source for source in (HuggingFaceSource(), TimmSource(), TorchBenchSource())
}


def models_config(standard: Standard) -> ModelsConfig:
    return _load(standard.tier_file(TIER))


@functools.lru_cache(maxsize=8)
def _load(path: Path) -> ModelsConfig:
    return load_models_config(path, SOURCES, flow_names())


def all_cases(standard: Standard) -> list[ModelCase]:
    config = models_config(standard)
    cases = [case for source in SOURCES.values() for case in source.cases(config)]
    if standard.training is None:
        return cases
    return cases + [training_case(case) for case in cases if case.flow == EAGER]


def training_case(eager: ModelCase) -> ModelCase:
    """The training step of the model ``eager`` runs forward: on the same path, judged apart."""
    test_id = f"models/{eager.source}/{eager.name}/{TRAIN}"
    return dataclasses.replace(eager, test_id=test_id, training=True)


def all_test_ids(standard: Standard) -> list[str]:
    """Every model test id of ``standard``, sorted: what ``ckit standard lock`` writes."""
    return sorted(case.test_id for case in all_cases(standard))


def find_case(standard: Standard, test_id: str) -> ModelCase:
    for case in all_cases(standard):
        if case.test_id == test_id:
            return case
    raise InputError(f"{test_id}: not a model test of standard {standard.version}")


def run_model_case(ckit: KitContext, test_id: str) -> None:
    """Run one model test; returns on PASS, raises a kit outcome or skips otherwise."""
    case = find_case(ckit.standard, test_id)
    if case.flow not in ckit.vendor.flows:
        not_applicable(
            NotApplicableReason.UNCLAIMED_FLOW,
            f"vendor {ckit.vendor.id} does not claim flow {case.flow}",
        )
    source = usable_source(ckit, case)
    if case.flow != EAGER:
        run_model_through_flow(ckit, case, source)
        return
    run = device_training if case.training else FLOWS[case.flow]
    built = source.build(case)
    run_split(
        ckit.evidence_path,
        lambda: run(built, case, ckit.device),
        lambda evidence: judge_model_evidence(ckit.standard, test_id, evidence),
    )
    record_performance(ckit, built, case)


def usable_source(ckit: KitContext, case: ModelCase) -> ModelSource:
    """``case``'s source, once the vendor claims the tier's dtype and the source can build
    here: an absent optional source is NOT_APPLICABLE, an absent required one the kit's
    error (the compile tier's compiled models ask the same, ``kit.tiers.compile``)."""
    ckit.require_dtype(MODEL_DTYPE)
    source = SOURCES[case.source]
    reason = source.unavailable_reason()
    if reason is not None and source.optional:
        not_applicable(NotApplicableReason.OPTIONAL_SOURCE_ABSENT, reason)
    if reason is not None:
        raise KitOutcome(f"{reason}; the kit needs it: reinstall the kit's requirements")
    return source


def record_performance(ckit: KitContext, built: BuiltModel, case: ModelCase) -> None:
    """Time the model the judged call just ran (its evidence saved or, under plain pytest,
    judged): figures for the record, never a verdict (``kit.tiers.models.measure``)."""
    from kit.tiers.models.measure import measure_model

    devices = ckit.device_info.count if ckit.device_info is not None else 0
    figures = measure_model(built, case, ckit.vendor, devices)
    ckit.notes[PERFORMANCE_KEY] = figures.to_json()


def run_model_through_flow(ckit: KitContext, case: ModelCase, source: ModelSource) -> None:
    """A program flow: the built model's subject through the flow, judged by the kit."""
    from kit.flows.pipeline import flow_evidence

    ckit.require_flow(case.flow)
    options = ckit.vendor.flow_options.get(case.flow, {})
    details = run_split(
        ckit.evidence_path,
        lambda: flow_evidence(case.flow, _subject_of(case, source), options),
        lambda evidence: judge_model_evidence(ckit.standard, case.test_id, evidence),
    )
    ckit.notes.update(details or {})


def _subject_of(case: ModelCase, source: ModelSource) -> Any:
    from kit.tiers.models.subject import model_subject

    return model_subject(case.test_id, source.build(case), case)


def judge_model_evidence(
    standard: Standard, test_id: str, evidence: Any, golden: GoldenWriter | None = None
) -> RecordDetails:
    """Judge a device's output for ``test_id`` against a model built here, never the device's
    (through a program flow, ``golden`` keeps a passing test's artifacts)."""
    case = find_case(standard, test_id)
    if case.training:
        return judge_training(standard, SOURCES[case.source].build(case), case, evidence)
    if case.flow != EAGER:
        return judge_model_flow(standard, case, evidence, golden)
    judge_output(SOURCES[case.source].build(case), case, evidence)
    return {}


def judge_model_flow(
    standard: Standard, case: ModelCase, evidence: Any, golden: GoldenWriter | None = None
) -> RecordDetails:
    """The model tier's reference and tolerance; a quantized flow's SQNR floor instead."""
    from kit.flows.judging import judge_run
    from kit.flows.subjects import flat_tensors
    from kit.tiers.models.flows import DEVICE_DTYPE, reference_output
    from kit.tiers.models.subject import model_subject

    built = SOURCES[case.source].build(case)
    expected = flat_tensors(reference_output(built, case))
    inputs = model_subject(case.test_id, built, case).inputs
    # Golden outputs in the dtype the program returns (float32), as the reference runtime's
    # re-run gives them: the float64 reference kept as it is would fail every re-run's dtype.
    stored = tuple(t.to(DEVICE_DTYPE) if t.is_floating_point() else t for t in expected)
    return judge_run(case.test_id, case.flow, evidence, inputs, expected,
                     model_flow_criterion(standard, case), golden, stored)


def model_flow_criterion(standard: Standard, case: ModelCase) -> Criterion:
    """What a model's program flow is judged by: the model's tolerance, or for a quantized flow
    the flows tier's SQNR floor (``kit.golden_check.criteria`` judges its re-runs by the same)."""
    from kit.flows import get_flow
    from kit.flows.config import flows_config

    if get_flow(case.flow).quantized:
        return flows_config(standard).criterion(case.flow)
    return case.tolerance


__all__ = [
    "SOURCES",
    "TRAIN",
    "BuiltModel",
    "ModelCase",
    "ModelSource",
    "all_cases",
    "all_test_ids",
    "find_case",
    "judge_model_evidence",
    "models_config",
    "run_model_case",
]
