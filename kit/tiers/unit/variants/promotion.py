"""``promotion``: an op's other operand given as a Python scalar (bool, int, float) or as a
tensor of another dtype, 0-dim included, so the result dtype follows ``torch.result_type``'s
rules (a 0-dim tensor does not promote a dimensioned one of its own category; a scalar of a
higher category does). The result dtypes must equal CPU's exactly (``wrong-dtype``), then the
values are judged.

Ids: ``<op>/<dtype>/promotion-<label>``, the dtype segment being the first operand's; a label
naming a dtype (``promotion-int32``, ``promotion-float64_0d``) makes the test use that dtype
too, and it applies only to a vendor claiming both (``operand_dtypes``).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterator
from typing import Any

import torch

from kit.tiers.unit.checking import Fact, UnitCase
from kit.tiers.unit.entries import OpEntry
from kit.tiers.unit.operand_dtypes import ZERO_DIM_SUFFIX, other_dtype_of_label
from kit.tiers.unit.samples import sample_case
from kit.tiers.unit.trees import TORCH_DTYPES, tensor_leaves
from kit.tiers.unit.variants.interface import (
    LABEL_SEPARATOR,
    Candidate,
    VariantKind,
    VariantSource,
)

#: The Python scalars given as the other operand, by label: one of each category.
SCALARS: dict[str, bool | int | float] = {"bool": True, "int": 3, "float": 2.5}
#: Per tested dtype, the other operand's dtypes: another category (dimensioned), the same
#: category at another width, and a 0-dim tensor (``_0d``), which promotes only across
#: categories.
OTHER_DTYPES: dict[str, tuple[str, ...]] = {
    "float32": ("int32", "float16", "float64_0d"),
    "float64": ("int64", "float32", "float16_0d"),
    "float16": ("bfloat16", "float32", "int64_0d"),
    "bfloat16": ("float16", "int32", "float32_0d"),
    "int64": ("int32", "float16", "float64_0d"),
    "int32": ("int64", "bool", "float32_0d"),
    "bool": ("int32", "float32", "int64_0d"),
}
#: How many of the op's OpInfo samples are tried, in order, for each label.
TRIED_SAMPLES = 4
#: The fact a promotion case observes: compared exactly, before any value.
RESULT_DTYPES = "the result's dtypes"
WRONG_DTYPE = "wrong-dtype"


class Promotion(VariantKind):
    name = "promotion"
    summary = ("the other operand as a Python bool/int/float or a tensor of another dtype "
               "(0-dim included): the result dtype must be CPU's")

    def build(self, source: VariantSource, accepts: Callable[[Any], bool]) -> dict[str, object]:
        """One sample per label: the first of the op's samples CPU accepts it in."""
        built: dict[str, object] = {}
        for label, replacement in _replacements(source.dtype):
            for number, sample in enumerate(_with_other_operand(source)):
                candidate = functools.partial(_replaced, sample, replacement)
                made = source.seeded(candidate, f"{label}.{number}")
                if made is not None and accepts(made):
                    built[f"{source.rule.name}{LABEL_SEPARATOR}{label}"] = made
                    break
        return built

    def candidates(self, source: VariantSource) -> Iterator[Candidate]:
        return iter(())  # ``build`` names its samples by label

    def case(self, entry: OpEntry, dtype: str, sample: Any, label: str) -> UnitCase:
        return dataclasses.replace(
            sample_case(entry, dtype, sample, label, exact_layout=True), observe=result_dtypes
        )


def result_dtypes(inputs: Any, result: Any) -> tuple[Fact, ...]:
    """The dtype of every tensor the call returned, in order."""
    dtypes = tuple(str(leaf.dtype) for _, leaf in tensor_leaves(result))
    return (Fact(RESULT_DTYPES, WRONG_DTYPE, dtypes),)


#: Builds the other operand from the operand it replaces (under the candidate's seed).
Replacement = Callable[[torch.Tensor], Any]


def _replacements(dtype: str) -> Iterator[tuple[str, Replacement]]:
    for label, scalar in SCALARS.items():
        yield label, functools.partial(_scalar, scalar)
    for label in OTHER_DTYPES.get(dtype, ()):
        other = other_dtype_of_label(label)
        assert other is not None  # the table names dtypes only
        yield label, functools.partial(_tensor, TORCH_DTYPES[other],
                                       label.endswith(ZERO_DIM_SUFFIX))


def _scalar(value: bool | int | float, like: torch.Tensor) -> bool | int | float:
    return value


def _tensor(dtype: torch.dtype, zero_dim: bool, like: torch.Tensor) -> torch.Tensor:
    from torch.testing import make_tensor

    return make_tensor(() if zero_dim else like.shape, dtype=dtype, device="cpu")


def _with_other_operand(source: VariantSource) -> Iterator[Any]:
    """The op's first samples whose input is a dimensioned tensor and which pass another
    tensor positionally (the operand replaced)."""
    found = 0
    for sample in source.samples:
        if found == TRIED_SAMPLES:
            return
        if (isinstance(sample.input, torch.Tensor) and sample.input.dim() > 0
                and _other_position(sample) is not None):
            found += 1
            yield sample


def _other_position(sample: Any) -> int | None:
    """The position in ``sample.args`` of the last tensor argument (``other``, ``max``)."""
    positions = [i for i, arg in enumerate(sample.args) if isinstance(arg, torch.Tensor)]
    return positions[-1] if positions else None


def _replaced(sample: Any, replacement: Replacement) -> Any:
    from torch.testing._internal.opinfo.core import SampleInput

    position = _other_position(sample)
    assert position is not None  # _with_other_operand chose it so
    args = [a.clone() if isinstance(a, torch.Tensor) else a for a in sample.args]
    args[position] = replacement(sample.args[position])
    return SampleInput(sample.input.clone(), args=tuple(args), kwargs=dict(sample.kwargs))
