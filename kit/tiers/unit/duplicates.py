"""Duplicate indices: an index op judged in any order of its duplicates (issue 38).

Where an index repeats, PyTorch fixes no order (``torch.use_deterministic_algorithms`` lists the
ops): a device may add the duplicates in any order, and where the op writes without
accumulating, any one of them may land. An op spec declares it (``duplicates:``, parsed into
``kit.tiers.unit.entries.Duplicates``), and the judge takes it by one of two rules, each named
in the record's ``details.duplicates``:

- ``accumulation`` (``index_add``, ``scatter_add``, ``scatter_reduce``, ``index_put`` and
  ``put`` with ``accumulate=True``): judged by the op's class against the float64 reference,
  a bound that grows with the terms accumulated (``K``, ``kit.numerics.accumulation``), so any
  order within rounding passes and a lost or doubled term does not;
- ``any-writer`` (``index_copy``, ``scatter``, ``index_put`` and ``put`` without it): each
  position that several source elements write must hold one of their values; every other
  position is judged exactly as ever. The reference takes, at each such position, the device's
  value where it is one of the candidates (CPU's otherwise), and the one comparison of
  ``kit.numerics`` judges the rest: a value no writer wrote fails there as ``FAIL_NUMERIC``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from kit.numerics.comparison import Measurement
from kit.outcomes import NumericMismatch
from kit.tiers.unit.entries import Duplicates, Writes
from kit.tiers.unit.trees import tensor_leaves

ACCUMULATION = "accumulation"
ANY_WRITER = "any-writer"
#: The input a write writes into (``index_copy``'s ``self``): always the first positional one.
TARGET = "args[0]"


def rule_of(duplicates: Duplicates) -> str:
    return ANY_WRITER if duplicates.writes is not None else ACCUMULATION


@dataclass(frozen=True)
class Resolution:
    """How ``any-writer`` resolved a result: positions several elements write, and those
    among them whose device value is none of their writers'."""

    duplicated: int
    unwritten: int


def details_of(duplicates: Duplicates | None, resolution: Resolution | None = None
               ) -> dict[str, Any]:
    """``details.duplicates`` of a record (pass or fail); empty where nothing is declared."""
    if duplicates is None:
        return {}
    found: dict[str, Any] = {"rule": rule_of(duplicates)}
    if duplicates.nondeterministic:
        found["nondeterministic"] = duplicates.nondeterministic
    if resolution is not None:
        found["duplicated_positions"] = resolution.duplicated
        found["no_writer_value"] = resolution.unwritten
    return {"duplicates": found}


class DuplicatesMismatch(NumericMismatch):
    """A ``NumericMismatch`` of a case with duplicate indices, naming the rule that judged it."""

    def __init__(self, failed: NumericMismatch, duplicates: Duplicates,
                 resolution: Resolution | None) -> None:
        super().__init__(failed.worst, failed.measurements)
        self.duplicates = duplicates
        self.resolution = resolution
        if resolution is not None and resolution.unwritten:
            self.args = (f"{ANY_WRITER}: {resolution.unwritten} of {resolution.duplicated} "
                         "duplicated positions hold no value their writers wrote; "
                         + str(self.args[0]),)
        else:
            self.args = (f"{rule_of(duplicates)} over duplicate indices: {self.args[0]}",)

    def details(self) -> dict[str, Any]:
        return {**super().details(), **details_of(self.duplicates, self.resolution)}


def judged(duplicates: Duplicates, inputs: Any, actual: Any, reference: Any,
           compare: Callable[[Any, Any], list[Measurement]]) -> list[Measurement]:
    """``compare(actual, reference)`` (the unit tier's one comparison, returning its
    measurements) under ``duplicates``' rule; a failure names the rule."""
    resolution = None
    if duplicates.writes is not None:
        reference, resolution = any_writer_reference(duplicates.writes, inputs, actual, reference)
    try:
        return compare(actual, reference)
    except NumericMismatch as failed:
        raise DuplicatesMismatch(failed, duplicates, resolution) from failed


def any_writer_reference(writes: Writes, inputs: Any, actual: Any, reference: Any
                         ) -> tuple[Any, Resolution | None]:
    """``reference`` with each position several source elements write set to the device's
    value where that value is one of theirs (in the tested dtype), and the ``Resolution``.
    Left as it is where the result is no tensor of the target's shape (the comparison then
    says what differs)."""
    leaves = dict(tensor_leaves(inputs))
    target = leaves.get(TARGET)
    if (target is None or not isinstance(actual, torch.Tensor)
            or not isinstance(reference, torch.Tensor) or actual.shape != target.shape
            or reference.shape != target.shape):
        return reference, None
    positions, values = _writers(writes, target, leaves[writes.index], leaves[writes.source])
    numel = target.numel()
    counts = torch.bincount(positions, minlength=numel)
    device = actual.contiguous().reshape(-1)
    matches = (device[positions] == values.to(device.dtype)).to(torch.int64)
    held = torch.zeros(numel, dtype=torch.int64).index_add_(0, positions, matches) > 0
    duplicated = counts >= 2
    chosen = duplicated & held
    resolved = reference.contiguous().reshape(-1).clone()
    resolved[chosen] = device[chosen].to(resolved.dtype)
    resolution = Resolution(int(duplicated.sum()), int((duplicated & ~held).sum()))
    return resolved.reshape(reference.shape), resolution


def _writers(writes: Writes, target: torch.Tensor, index: torch.Tensor, source: torch.Tensor
             ) -> tuple[torch.Tensor, torch.Tensor]:
    """Each source element's flat position in ``target`` and its value."""
    if writes.dim is None:  # put: positions in the flattened target
        return index.reshape(-1) % max(1, target.numel()), source.reshape(-1)
    dim = writes.dim % max(1, source.dim())
    if index.dim() == 1 and source.dim() > 1:  # index_copy, index_put: whole slices
        shape = [1] * source.dim()
        shape[dim] = -1
        index = index.view(shape).expand(source.shape)
    else:  # scatter: one index per element (src may be larger than index)
        source = source[tuple(slice(0, size) for size in index.shape)]
    coordinates = _coordinates(tuple(index.shape))
    coordinates[dim] = index % max(1, target.shape[dim])
    strides = _contiguous_strides(tuple(target.shape))
    flat = sum((c * s for c, s in zip(coordinates, strides, strict=True)),
               torch.zeros(index.shape, dtype=torch.int64))
    return flat.reshape(-1), source.reshape(-1)


def _coordinates(shape: tuple[int, ...]) -> list[torch.Tensor]:
    if not shape:
        return []
    return list(torch.meshgrid(*(torch.arange(size) for size in shape), indexing="ij"))


def _contiguous_strides(shape: Sequence[int]) -> list[int]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(1, size)
    return strides[::-1]
