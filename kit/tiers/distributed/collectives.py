"""Each collective three ways: the inputs every rank gives, the call a rank makes on the device,
and what it must leave on each rank, computed from the same seeded inputs by the kit's judge.

The reference is the collective's definition (gloo's on the CPU: a reduction over the ranks in
float64, a gather, a transpose of the ranks' chunks), computed in one process from the inputs the
judge regenerates from the test id: no rank's word is taken for what it was given.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import torch

from kit.errors import InputError
from kit.tiers.distributed.ids import CASE_SHAPES, DistributedId

#: A rank's inputs: the tensors it gives the collective (one, or one per peer).
Tensors = list[torch.Tensor]


def rank_inputs(test: DistributedId, rank: int, device: str = "cpu") -> Tensors:
    """The seeded inputs of ``rank`` on ``device``: one tensor, or one per rank for a collective
    that sends each peer its own chunk (all_to_all, reduce_scatter)."""
    count = test.ranks if test.collective in PER_PEER else 1
    generator = _generator(str(test), rank)
    return [_tensor(test, generator, device) for _ in range(count)]


def _generator(test_id: str, rank: int) -> torch.Generator:
    seed = int.from_bytes(hashlib.sha256(f"{test_id}#{rank}".encode()).digest()[:8], "big")
    return torch.Generator().manual_seed(seed >> 1)


def _tensor(test: DistributedId, generator: torch.Generator, device: str) -> torch.Tensor:
    dtype = getattr(torch, test.dtype)
    shape = CASE_SHAPES[test.case]
    if test.case == "strided":  # every other column of a wider tensor: not contiguous
        shape = (shape[0], shape[1] * 2)
    if dtype.is_floating_point:
        if test.op == "product":  # near 1, so the product of the ranks stays in range
            values = 0.5 + torch.rand(shape, generator=generator, dtype=torch.float64)
        else:
            values = torch.randn(shape, generator=generator, dtype=torch.float64)
    else:
        low, high = (1, 4) if test.op == "product" else (-100, 100)
        values = torch.randint(low, high, shape, generator=generator, dtype=torch.int64)
    tensor = values.to(dtype).to(device)  # the view is taken on the device
    return tensor[:, ::2] if test.case == "strided" else tensor


#: The collectives whose rank gives one tensor per peer.
PER_PEER = frozenset({"all_to_all", "reduce_scatter"})


def broadcast_source(ranks: int) -> int:
    """The broadcast's source: the last rank, so a device that sends rank 0's tensor fails."""
    return ranks - 1


# -- the reference (the judge's) ------------------------------------------------------------

#: Reductions over the ranks (dimension 0 of the stacked inputs), in float64 or int64.
_REDUCTIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "sum": lambda s: s.sum(0),
    "product": lambda s: s.prod(0),
    "min": lambda s: s.amin(0),
    "max": lambda s: s.amax(0),
    "avg": lambda s: s.sum(0) / s.shape[0],
}
#: Bitwise reductions (integers only), folded over the ranks in order.
_BITWISE: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "band": torch.bitwise_and, "bor": torch.bitwise_or, "bxor": torch.bitwise_xor,
}


def reduced(op: str, tensors: Tensors) -> torch.Tensor:
    """The reduction of ``tensors`` (one per rank) in float64 (integers: int64, exact)."""
    wide = torch.float64 if tensors[0].is_floating_point() else torch.int64
    stacked = torch.stack([t.to(wide) for t in tensors])
    if op in _BITWISE:
        result = stacked[0]
        for tensor in stacked[1:]:
            result = _BITWISE[op](result, tensor)
        return result
    if op not in _REDUCTIONS:
        raise InputError(f"unknown reduce op {op!r}")
    return _REDUCTIONS[op](stacked)


def magnitude(test: DistributedId) -> float:
    """The largest element of the reduction of the ranks' ``|inputs|`` (Higham's sum of
    ``|x|``): the scale a sum over the ranks rounds at, however far it cancels."""
    inputs = [rank_inputs(test, rank) for rank in range(test.ranks)]
    chunks = range(len(inputs[0]))  # reduce_scatter reduces each chunk over the ranks
    op = test.op or "sum"
    terms = [reduced(op, [given[chunk].abs() for given in inputs]) for chunk in chunks]
    return max((float(t.max()) for t in terms if t.numel()), default=0.0)


def expected_outputs(test: DistributedId) -> list[Tensors]:
    """Per rank, what the collective must leave there (float64 for floating reductions)."""
    inputs = [rank_inputs(test, rank) for rank in range(test.ranks)]
    ranks = range(test.ranks)
    collective = test.collective
    if collective == "all_reduce":
        result = reduced(_op(test), [given[0] for given in inputs])
        return [[result] for _ in ranks]
    if collective == "all_gather":
        return [[given[0] for given in inputs] for _ in ranks]
    if collective == "broadcast":
        return [[inputs[broadcast_source(test.ranks)][0]] for _ in ranks]
    if collective == "all_to_all":
        return [[inputs[peer][rank] for peer in ranks] for rank in ranks]
    if collective == "reduce_scatter":
        return [[reduced(_op(test), [inputs[peer][rank] for peer in ranks])] for rank in ranks]
    if collective == "send_recv":
        return [[inputs[(rank - 1) % test.ranks][0]] for rank in ranks]
    if collective == "barrier":
        return [[] for _ in ranks]
    raise InputError(f"{test}: unknown collective {collective!r}")


def _op(test: DistributedId) -> str:
    if test.op is None:
        raise InputError(f"{test}: {test.collective} needs a reduce op")
    return test.op


@dataclass(frozen=True)
class Judged:
    """How a collective's outputs are judged: the error model's op class of the standard."""

    op_class: str
    #: The accumulation length (the ranks summed), for a class that accumulates.
    length: int


def criterion_of(test: DistributedId) -> Judged:
    """A sum or average accumulates over the ranks (``loss``: scaled by the terms' magnitude,
    which a sum of signed terms cancels below); a product rounds once per rank; the rest move
    values and must be exact."""
    if test.op in ("sum", "avg"):
        return Judged("loss", test.ranks)
    if test.op == "product":
        return Judged("compound", test.ranks)
    return Judged("exact", 1)
