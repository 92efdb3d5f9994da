"""The distributed tier's stable ids and the one list of what they combine.

An id is ``distributed/<collective>/<dtype>/<case>/<ranks>``: ``distributed/all_reduce-sum/
float32/small/2``. A reducing collective carries its reduce op after a dash (``all_reduce-max``,
``reduce_scatter-sum``), so the op and the dtype sit where every tier's op ids put them
(``Tier.op_offset`` 0). ``case`` is the inputs' shape: ``small`` (5 x 6 per tensor), ``empty``
(0 x 6), ``strided`` (a non-contiguous 5 x 6 view), ``large`` (2**20 + 16 elements); ``ranks``
the number of local rank processes. ``ddp-linear`` is one DDP training step of a small model
(``case`` ``step``). ``locked_ids`` is what ``ckit standard lock`` writes: chosen so that the
tier costs about a minute of a complete run (each test forks its ranks from the warm worker).
"""

from __future__ import annotations

from dataclasses import dataclass

from kit.errors import InputError
from kit.test_ids import TestId

TIER = "distributed"
#: The collective of the DDP training step test.
DDP = "ddp-linear"
#: Its case segment.
DDP_CASE = "step"

#: Per case, the shape of each tensor a rank gives or receives.
CASE_SHAPES: dict[str, tuple[int, ...]] = {
    "small": (5, 6),
    "empty": (0, 6),
    "strided": (5, 6),
    "large": (2**20 + 16,),
}
#: Reduce ops per dtype family (gloo takes no bitwise op on floats, no average on integers).
FLOAT_OPS = ("sum", "product", "min", "max", "avg")
INTEGER_OPS = ("sum", "product", "min", "max", "band", "bor", "bxor")
FLOAT_DTYPES = ("float32", "bfloat16", "float16")
INTEGER_DTYPES = ("int64", "int32")


@dataclass(frozen=True)
class DistributedId:
    collective: str
    #: The reduce op of a reducing collective; None for the others.
    op: str | None
    dtype: str
    case: str
    ranks: int

    @classmethod
    def of(cls, test_id: str) -> DistributedId:
        parsed = TestId.read(test_id, (TIER,))
        if parsed is None or len(parsed.segments) != 4 or not parsed.segments[3].isdigit():
            raise InputError(f"not a distributed test id: {test_id!r} "
                             f"(expected {TIER}/<collective>/<dtype>/<case>/<ranks>)")
        head, dtype, case, ranks = parsed.segments
        collective, _, op = head.partition("-") if head != DDP else (DDP, "", "")
        return cls(collective, op or None, dtype, case, int(ranks))

    @property
    def head(self) -> str:
        return self.collective if self.op is None else f"{self.collective}-{self.op}"

    def __str__(self) -> str:
        return str(TestId(TIER, (self.head, self.dtype, self.case, str(self.ranks))))


def _ids(collectives: tuple[str, ...], dtypes: tuple[str, ...], cases: tuple[str, ...],
         ranks: tuple[int, ...]) -> list[str]:
    return [f"{TIER}/{c}/{d}/{k}/{r}" for c in collectives for d in dtypes for k in cases
            for r in ranks]


def locked_ids() -> list[str]:
    """Every id of the tier: each reduce op over its dtypes, every other collective over the
    cases, 4 ranks for a few, past 2**20 elements for a few, and the DDP step."""
    reduce_float = tuple(f"all_reduce-{op}" for op in FLOAT_OPS)
    reduce_int = tuple(f"all_reduce-{op}" for op in INTEGER_OPS)
    moving = ("all_gather", "broadcast", "all_to_all", "reduce_scatter-sum")
    ids = [
        *_ids(reduce_float, ("float32",), ("small",), (2,)),
        *_ids(reduce_float[:4], FLOAT_DTYPES[1:], ("small",), (2,)),
        *_ids(reduce_int, ("int64",), ("small",), (2,)),
        *_ids(("all_reduce-sum",), ("int32",), ("small",), (2,)),
        *_ids(("all_reduce-sum", *moving), ("float32",), ("empty",), (2,)),
        # Non-contiguous inputs only where the collective reads them: gloo itself reduces or
        # broadcasts into a non-contiguous tensor wrong (half the elements), so no in-place one.
        *_ids(("all_gather", "all_to_all", "reduce_scatter-sum"), ("float32",), ("strided",), (2,)),
        *_ids(moving, ("float32", "bfloat16", "int64"), ("small",), (2,)),
        *_ids(("all_reduce-sum", "all_gather", "all_to_all", "reduce_scatter-sum"),
              ("float32",), ("small",), (4,)),
        *_ids(("all_reduce-sum", "all_gather"), ("float32",), ("large",), (2,)),
        *_ids(("send_recv",), ("float32", "int64"), ("small", "empty"), (2,)),
        *_ids(("send_recv",), ("float32",), ("small",), (4,)),
        *_ids(("barrier",), ("float32",), ("empty",), (2, 4)),
        *_ids((DDP,), ("float32",), (DDP_CASE,), (2,)),
    ]
    return sorted(set(ids))
