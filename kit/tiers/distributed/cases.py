"""One distributed test: its ranks run the collective on the device (the worker's half), the
kit's judge compares every rank's outputs with the collective's definition over the same seeded
inputs (``kit.tiers.distributed.collectives``), or the DDP step with its single-process
reference (``kit.tiers.distributed.ddp``)."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path
from typing import Any

import torch

from kit.context import KitContext
from kit.execution import run_split
from kit.json_shape import RecordDetails
from kit.numerics.comparison import Measurement, measure, paired_tensors
from kit.numerics.criteria import ErrorBound
from kit.numerics.judging import Judgement
from kit.numerics.model import dtype_name
from kit.outcomes import ResultMismatch, not_applicable, numerics_details
from kit.results import RANK_START_KEY, TRANSPORT_KEY
from kit.standard import Standard
from kit.tiers.distributed import collectives, ddp
from kit.tiers.distributed.ids import DDP, TIER, DistributedId
from kit.tiers.distributed.rank_start import RankStart, rank_start
from kit.tiers.distributed.ranks import Group, run_ranks


def run_distributed_case(ckit: KitContext, test_id: str) -> None:
    """Run one distributed test: the ranks here; the judge decides (``kit.execution``)."""
    from kit.applicability import unclaimed_process_group

    test = DistributedId.of(test_id)
    ckit.require_dtype(test.dtype)
    unclaimed = unclaimed_process_group(ckit.vendor)
    if unclaimed is not None:
        not_applicable(unclaimed.reason, unclaimed.words)
    backend = str(ckit.vendor.process_group_backend)
    if ckit.vendor.process_group_transport is not None:  # on every record, passing or not
        ckit.notes[TRANSPORT_KEY] = ckit.vendor.process_group_transport.value
    group = Group.within(backend, test.ranks, ckit.limit_s(TIER))
    job = _job(test, ckit.device)
    start = rank_start(ckit.vendor)
    ckit.notes[RANK_START_KEY] = start.method  # on every record, passing or not
    details = run_split(
        ckit.evidence_path,
        lambda: _ran(group, job, start),
        lambda evidence: judge_distributed_evidence(ckit.standard, test_id, evidence),
    )
    ckit.notes.update(details or {})


def _job(test: DistributedId, device: str) -> Any:
    if test.collective == DDP:
        return ddp.RankStep(test, device)
    return RankCollective(test, device)


def _ran(group: Group, job: Any, start: RankStart) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ckit-ranks-") as scratch:
        results = run_ranks(group, job, Path(scratch), start)
    return {"ranks": [result["outputs"] for result in results]}


class RankCollective:
    """What one rank does: its seeded inputs onto the device, the collective, its outputs back."""

    def __init__(self, test: DistributedId, device: str) -> None:
        self.test = test
        self.device = device

    def __call__(self, rank: int) -> list[torch.Tensor]:
        import torch.distributed as dist

        test = self.test
        given = collectives.rank_inputs(test, rank, self.device)
        peers = test.ranks
        op = getattr(dist.ReduceOp, test.op.upper()) if test.op else None
        if test.collective in ("all_reduce", "broadcast"):
            if op is not None:
                dist.all_reduce(given[0], op=op)
            else:
                dist.broadcast(given[0], src=collectives.broadcast_source(peers))
            return [given[0].cpu()]
        outputs = [torch.empty_like(given[0]) for _ in range(peers)]
        if test.collective == "all_gather":
            dist.all_gather(outputs, given[0])
        elif test.collective == "all_to_all":
            dist.all_to_all(outputs, given)
        elif test.collective == "reduce_scatter":
            outputs = outputs[:1]
            dist.reduce_scatter(outputs[0], given, op=op)
        elif test.collective == "send_recv":
            outputs = outputs[:1]
            sent = dist.isend(given[0], (rank + 1) % peers)
            received = dist.irecv(outputs[0], (rank - 1) % peers)
            for work in (sent, received):
                if work is not None:  # None: this rank is not in the group (never here)
                    work.wait()
        elif test.collective == "barrier":
            dist.barrier()
            outputs = []
        return [output.cpu() for output in outputs]


def judge_distributed_evidence(standard: Standard, test_id: str, evidence: Any) -> RecordDetails:
    """Every rank's outputs against what the collective must leave there, computed here."""
    test = DistributedId.of(test_id)
    ranks = evidence.get("ranks") if isinstance(evidence, dict) else None
    if not isinstance(ranks, list) or len(ranks) != test.ranks:
        raise ResultMismatch(f"expected the outputs of {test.ranks} ranks")
    if test.collective == DDP:
        return ddp.judge_step(standard, test, ranks)
    expected = collectives.expected_outputs(test)
    bound = _bound(standard, test)
    measured: list[tuple[torch.Tensor, torch.Tensor, Measurement]] = []
    for rank, (actual, wanted) in enumerate(zip(ranks, expected, strict=True)):
        _same_dtypes(actual, wanted, test, rank)
        for where, output, reference in paired_tensors(actual, wanted, f"rank {rank}"):
            figures = (_earlier(measured, output, reference, where)
                       or _equal(output, reference, bound, where)
                       or measure(output, reference, bound, where))
            measured.append((output, reference, figures))
    measurements = tuple(figures for _, _, figures in measured)
    Judgement(measurements).raise_if_failed()
    return {"ranks": test.ranks, **numerics_details(measurements)}


def _earlier(measured: list[tuple[torch.Tensor, torch.Tensor, Measurement]],
             output: torch.Tensor, reference: torch.Tensor, where: str) -> Measurement | None:
    """The figures of an earlier output of the same values against the same reference,
    relabelled ``where`` (the same values on another rank are the same errors, and measuring
    2**20 elements takes a second); None where there is none."""
    for earlier_output, earlier_reference, figures in measured:
        if _same(earlier_output, output) and _same(earlier_reference, reference):
            return dataclasses.replace(figures, where=where)
    return None


def _equal(output: torch.Tensor, reference: torch.Tensor, bound: ErrorBound, where: str
           ) -> Measurement | None:
    """Zero errors where an exact collective moved the values unchanged (what ``measure``
    finds, without its float64 pass over every element); None otherwise."""
    if not bound.is_exact(output.dtype) or not _same(output, reference):
        return None
    name = dtype_name(output.dtype)
    return Measurement(where=where, numel=output.numel(), mismatched=0, ratio=0.0,
                       max_abs_err=0.0, max_rel_err=0.0, max_ulps=0.0, dtype=name,
                       bound=bound.describe(name))


def _same(one: torch.Tensor, other: torch.Tensor) -> bool:
    return one.dtype == other.dtype and one.shape == other.shape and bool(
        torch.equal(one, other) or (one.is_floating_point() and torch.equal(
            one.isnan(), other.isnan()) and torch.equal(one.nan_to_num(), other.nan_to_num()))
    )


def _same_dtypes(actual: Any, wanted: list[torch.Tensor], test: DistributedId, rank: int
                 ) -> None:
    dtype = getattr(torch, test.dtype)
    if not isinstance(actual, list) or len(actual) != len(wanted):
        raise ResultMismatch(f"rank {rank}: expected {len(wanted)} outputs")
    for index, output in enumerate(actual):
        if not isinstance(output, torch.Tensor) or output.dtype != dtype:
            got = output.dtype if isinstance(output, torch.Tensor) else type(output).__name__
            raise ResultMismatch(f"rank {rank}: output {index} is {got}, expected {dtype}",
                                 failure="wrong-dtype")


def _bound(standard: Standard, test: DistributedId) -> ErrorBound:
    judged = collectives.criterion_of(test)
    magnitude = collectives.magnitude(test) if judged.op_class == "loss" else 0.0
    return ErrorBound(standard.numerics, judged.op_class, length=judged.length,
                      magnitude=magnitude)
