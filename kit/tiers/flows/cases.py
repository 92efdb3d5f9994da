"""The flows tier: op specs, exportable OpInfo samples and models through each program flow.

Stable ids are ``flows/<flow>/<unit id without "unit/">`` (``flows/onnxruntime_cpu/opinfo/add/
float32/0``): every float32 op spec case and sample 0 of every float32 OpInfo op of the unit
tier whose subject exports with ``torch.export`` on the CPU, through every flow ``flows.yaml``
lists. ``ckit standard lock`` decides which (``all_test_ids``); the suite reads the locked list.
Models through program flows keep their model-tier ids (``models/<source>/<model>/<flow>``).

A test's device half builds the subject and runs it through the flow (``kit.flows.pipeline``),
in the vendor's process; the judge rebuilds the subject, runs it eagerly on the CPU and
decides (``kit.flows.judging``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kit.context import KitContext
from kit.errors import InputError
from kit.execution import run_split
from kit.flows.config import TIER, flows_config
from kit.standard import Standard
from kit.test_ids import TestId
from kit.tiers.unit.unit_id import TIER as UNIT_TIER
from kit.tiers.unit.unit_id import UnitId

if TYPE_CHECKING:
    import torch

    from kit.flows.interface import Subject
    from kit.golden import GoldenWriter
    from kit.json_shape import RecordDetails

PREFIX = f"{TIER}/"
#: The dtype every subject is built in: flows are judged against eager CPU float32.
SUBJECT_DTYPE = "float32"


def flow_test_id(flow: str, unit_id: str) -> str:
    """``flows/<flow>/opinfo/add/float32/0`` for unit id ``unit/opinfo/add/float32/0``."""
    return str(TestId(TIER, (flow, *TestId.parse(unit_id, (UNIT_TIER,)).segments)))


def parse_flow_id(test_id: str) -> tuple[str, str]:
    """``(flow, unit id)`` of a flows tier id."""
    parsed = TestId.read(test_id, (TIER,))
    if parsed is None or len(parsed.segments) < 2:
        raise InputError(f"not a flows test id: {test_id!r}")
    flow, *unit_segments = parsed.segments
    return flow, str(TestId(UNIT_TIER, tuple(unit_segments)))


def candidate_unit_ids(standard: Standard) -> list[str]:
    """Every float32 op spec case and sample 0 of every float32 OpInfo op of the unit tier."""
    from kit.tiers.unit.cases import OPINFO_PREFIX, OPSPEC_PREFIX

    ids = standard.test_ids("unit")
    specs = [i for i in ids if i.startswith(OPSPEC_PREFIX) and _dtype(i) == SUBJECT_DTYPE]
    samples = [i for i in ids if i.startswith(OPINFO_PREFIX) and _dtype(i) == SUBJECT_DTYPE
               and UnitId.of(i).sample == "0"]
    return specs + samples


def _dtype(unit_id: str) -> str:
    return UnitId.of(unit_id).dtype


def exportable_unit_ids(standard: Standard) -> list[str]:
    """The candidates whose subject ``torch.export`` takes on the CPU (seconds per hundred)."""
    return [i for i in candidate_unit_ids(standard) if _exports(standard, i)]


def _exports(standard: Standard, unit_id: str) -> bool:
    """Whether ``torch.export`` takes the subject; never for a case whose indices repeat
    (``duplicates:``): a flow is judged element by element against eager, and which duplicate
    lands, or in which order they add, is no fact a lowered program must share."""
    import torch

    from kit.tiers.flows.subjects import unit_subject
    from kit.tiers.unit.cases import unit_case

    case = unit_case(standard, unit_id)
    if case.comparison.duplicates is not None:
        return False
    subject = unit_subject(unit_id, case)
    try:
        torch.export.export(subject.module, subject.inputs, strict=False)
    except Exception:  # noqa: BLE001 - any failure to export leaves the sample out
        return False
    return True


def all_test_ids(standard: Standard) -> list[str]:
    """Every flows test id of ``standard``: what ``ckit standard lock`` writes."""
    subjects = exportable_unit_ids(standard)
    return sorted(flow_test_id(flow, i) for flow in flows_config(standard).flows for i in subjects)


def build_subject(standard: Standard, unit_id: str, test_id: str | None = None) -> Subject:
    from kit.tiers.flows.subjects import unit_subject
    from kit.tiers.unit.cases import unit_case

    return unit_subject(test_id or unit_id, unit_case(standard, unit_id))


def run_flow_case(ckit: KitContext, test_id: str) -> None:
    """Run one flows test: the device half here; the judge decides (``kit.execution``)."""
    from kit.flows.pipeline import flow_evidence

    flow, unit_id = parse_flow_id(test_id)
    ckit.require_flow(flow)
    options = ckit.vendor.flow_options.get(flow, {})
    details = run_split(
        ckit.evidence_path,
        lambda: flow_evidence(flow, build_subject(ckit.standard, unit_id, test_id), options),
        lambda evidence: judge_flow_evidence(ckit.standard, test_id, evidence),
    )
    ckit.notes.update(details or {})


def judge_flow_evidence(
    standard: Standard, test_id: str, evidence: Any, golden: GoldenWriter | None = None
) -> RecordDetails:
    """Judge the device's evidence for ``test_id`` against eager CPU, computed here; after a
    PASS, ``golden`` (a ``--golden`` run's) keeps the artifacts."""
    from kit.flows.judging import judge_run

    flow, unit_id = parse_flow_id(test_id)
    subject = build_subject(standard, unit_id, test_id)
    expected = eager_outputs(subject)
    return judge_run(test_id, flow, evidence, subject.inputs, expected,
                     flows_config(standard).criterion(flow), golden)


def eager_outputs(subject: Subject) -> tuple[torch.Tensor, ...]:
    import torch

    with torch.no_grad():
        return tuple(subject.module(*subject.inputs))

