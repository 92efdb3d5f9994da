"""Which unit cases repeat their call: one OpInfo sample per (op, dtype).

A repeating case costs the device two more calls (``kit.tiers.unit.repeat``); on every case of
the tier that was about a third of its wall. A kernel caching its result by shape is caught by
one repeating case of the op, where the op's answer to the other values clearly differs from its
answer to the case's own inputs. So only one numbered OpInfo sample per (op, dtype) repeats: the
smallest of the tested samples (fewest elements) whose two CPU answers differ by more than a
quarter of their largest magnitude (any element, for exact results), far beyond any tolerance
of the standard and any machine's rounding; where none of the smallest ``MAX_PROBES`` does, the
smallest non-empty sample (its repeat still checks the bits repeat). Variants and op specs do
not repeat: they call the same kernels on other layouts, or the ops whose samples repeat.

The choice is CPU's, made in the kit's process when the standard is locked (``ckit standard
lock --tier unit``) and read from the standard at run time (``kit.tiers.unit.locked_ids``): a
vendor's process never runs the CPU ops that decide it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import torch

from kit.tiers.unit.config import UnitConfig
from kit.tiers.unit.entries import OpEntry
from kit.tiers.unit.opinfo_cases import PREFIX, parse_opinfo_id, selected_samples
from kit.tiers.unit.repeat import other_values
from kit.tiers.unit.samples import numel_of_sample, sample_case
from kit.tiers.unit.trees import select_outputs, tensor_leaves
from kit.tiers.unit.variants.special import Special

#: Samples tried, the smallest first, for one whose answer moves with the other values.
MAX_PROBES = 16
#: How far apart CPU's two answers must be, relative to their largest finite magnitude.
CLEAR_FRACTION = 0.25


@dataclass(frozen=True)
class Choice:
    """An (op, dtype)'s repeating sample, and whether its answer moves with the other values."""

    position: int | None
    moves: bool


_chosen: dict[tuple[str, str, str], Choice] = {}


def repeating_ids(config: UnitConfig, test_ids: list[str]) -> list[str]:
    """The OpInfo tests among ``test_ids`` that repeat their call (none where the standard asks
    for no repeat calls)."""
    if not config.coverage.repeat:
        return []
    return [test_id for test_id in test_ids
            if test_id.startswith(PREFIX) and is_chosen(config, test_id)]


def is_chosen(config: UnitConfig, test_id: str) -> bool:
    """Whether the OpInfo test ``test_id`` repeats its call: its (op, dtype)'s chosen sample,
    or the ``special`` variant of an op whose samples' answers never move (``isnan`` on
    OpInfo's finite samples: rolled NaNs move it)."""
    parsed = parse_opinfo_id(test_id)
    entry = config.op(parsed.op_key)
    if isinstance(parsed.sample, int):
        return parsed.sample == choice(config, entry, parsed.dtype).position
    return parsed.sample == Special.name and not any(
        choice(config, entry, dtype).moves for dtype in entry.dtypes)


def choice(config: UnitConfig, entry: OpEntry, dtype: str) -> Choice:
    """The (op, dtype)'s repeating sample (computed once per process)."""
    key = (str(config.source), entry.key, dtype)
    if key not in _chosen:
        _chosen[key] = _choose(config, entry, dtype)
    return _chosen[key]


def _choose(config: UnitConfig, entry: OpEntry, dtype: str) -> Choice:
    samples = selected_samples(config, entry, dtype)
    smallest = sorted((numel_of_sample(sample), position)
                      for position, sample in samples.items() if numel_of_sample(sample) > 0)
    accepted = []
    for _, position in smallest[:MAX_PROBES]:
        moves = _answer_moves(entry, dtype, samples[position])
        if moves:
            return Choice(position, True)
        if moves is not None:
            accepted.append(position)
    # The bits must still repeat; only on other values CPU accepts (a device need not check
    # what CPU refuses, and may crash on it).
    return Choice(accepted[0] if accepted else None, False)


def _answer_moves(entry: OpEntry, dtype: str, sample: Any) -> bool | None:
    """Whether CPU's answer to the other values clearly differs from its answer to ``sample``
    (None: CPU refuses either)."""
    case = sample_case(entry, dtype, sample, "repeat probe")
    outputs = case.comparison.compare_outputs
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            own = select_outputs(case.call("cpu", False, case.make_inputs("cpu", False)), outputs)
            other = select_outputs(
                case.call("cpu", False, other_values(case.make_inputs("cpu", False))), outputs)
        except Exception:  # noqa: BLE001 - a sample CPU refuses either way is no probe
            return None
    return clearly_differ(own, other)


def clearly_differ(a: Any, b: Any) -> bool:
    """Whether two results differ beyond rounding: in structure, shape or dtype, in any element
    of an exact tensor, or by ``CLEAR_FRACTION`` of the largest finite magnitude."""
    left, right = dict(tensor_leaves(a)), dict(tensor_leaves(b))
    if left.keys() != right.keys():
        return True
    return any(_tensors_differ(left[where], right[where]) for where in left)


def _tensors_differ(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return True
    if not (a.is_floating_point() or a.is_complex()):
        return not torch.equal(a, b)
    wide = torch.complex128 if a.is_complex() else torch.float64
    a, b = a.to(wide), b.to(wide)
    finite = torch.isfinite(a) & torch.isfinite(b)
    if not finite.any():
        return False
    gap = (a - b)[finite].abs().max()
    scale = torch.maximum(a[finite].abs().max(), b[finite].abs().max())
    return bool(gap > CLEAR_FRACTION * scale)
