"""Repeat calls: a unit case runs on the device again, after a call of the same shapes.

A kernel that caches its result by the shapes of its inputs (a compiled-graph or autotuning
cache keyed too loosely) passes a test that calls it once: its first call computes. Where the
standard asks for it (``coverage.repeat`` in ``unit.yaml``), the device half of one OpInfo case
per (op, dtype) (``kit.tiers.unit.repeat_choice``) calls the op three times:

1. on *other values* of the same shapes and dtypes (each input tensor's elements rolled, the
   ``n``-th by ``n`` places: the same values, so the op's domain mostly holds, at other
   positions and paired otherwise; where CPU refuses them the call may raise);
2. on the case's inputs: the result judged as usual;
3. on the case's inputs again.

and sends all three results (the tensors: the judge trusts no device verdict). The judge
requires 3 to be bitwise identical to 2 unless the op is declared nondeterministic, and, when
2's values are wrong but bitwise equal to 1's where CPU's answers to 1 and 2 differ, names the
failure a stale result. Either is ``SemanticMismatch(failure="stale-or-nondeterministic")``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from kit.outcomes import SemanticMismatch
from kit.tiers.unit.trees import map_tensors, select_outputs, to_cpu, to_device

FAILURE = "stale-or-nondeterministic"
#: The evidence's keys: the repeated call's result and the other values' (None: it raised).
AGAIN = "again"
OTHER = "other"


@dataclass(frozen=True)
class Repeat:
    """How a case repeats its call: ``bitwise`` unless the op is declared nondeterministic."""

    bitwise: bool = True


def other_values(inputs: Any) -> Any:
    """The inputs with every tensor's elements rolled: the ``n``-th tensor by ``n`` places
    (1, 2, ...), so the same values, at other positions and paired otherwise (same shapes)."""
    shifts = itertools.count(1)

    def rolled(tensor: torch.Tensor) -> torch.Tensor:
        shift = next(shifts)
        if tensor.numel() < 2:
            return tensor
        return tensor.reshape(-1).roll(shift).reshape(tensor.shape)

    return map_tensors(inputs, rolled)


def call_on_other_values(device: str, make_inputs: Callable[[str, bool], Any],
                         call: Callable[[str, bool, Any], Any]) -> Any:
    """Step 1 on the device: the result, on CPU, or None where the call raised (other values
    may leave an op's domain: a matrix no longer positive definite)."""
    try:
        # Rolled on CPU and then moved: the device's own ``roll`` is not under test here.
        inputs = to_device(other_values(make_inputs("cpu", False)), device)
        return to_cpu(call(device, False, inputs))
    except Exception:  # noqa: BLE001 - only the case's own inputs must be accepted
        return None


def repeat_evidence(again: object, other: object) -> dict[str, object]:
    return {AGAIN: again, OTHER: other}


def assert_repeatable(repeat: Repeat, result: Any, evidence: Any,
                      outputs: tuple[int, ...] | None) -> None:
    """Before values: the repeated call gave the very bits of the first (``bitwise`` only)."""
    if not isinstance(evidence, Mapping) or AGAIN not in evidence:
        raise SemanticMismatch("the device evidence holds no repeated call", failure=FAILURE)
    if repeat.bitwise and not same_bits(select_outputs(result, outputs),
                                        select_outputs(evidence[AGAIN], outputs)):
        raise SemanticMismatch(
            "the same call on the same inputs gave different bits the second time (a stale "
            "cached result, or an op not declared nondeterministic)",
            failure=FAILURE,
        )


def assert_not_stale(result: Any, evidence: Any, cpu_result: Any,
                     cpu_other: Callable[[], Any], outputs: tuple[int, ...] | None) -> None:
    """After wrong values: the device returned what it returned for other values, where CPU's
    answers to the two differ (``cpu_other``: CPU's answer to the other values)."""
    other = evidence.get(OTHER) if isinstance(evidence, Mapping) else None
    if other is None or not same_bits(select_outputs(result, outputs),
                                      select_outputs(other, outputs)):
        return
    if same_bits(select_outputs(cpu_result, outputs), select_outputs(cpu_other(), outputs)):
        return
    raise SemanticMismatch(
        "the device returned its result for the previous call of the same shapes (other "
        "values): a stale cached result",
        failure=FAILURE,
    )


def same_bits(a: Any, b: Any) -> bool:
    """The same structure, and every tensor the same dtype, shape and bytes (NaNs included)."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
                and _same_tensor(a, b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_bits(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(same_bits(a[k], b[k]) for k in a)
    return repr(a) == repr(b)


def _same_tensor(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.numel() == 0:
        return True
    return torch.equal(a.detach().cpu().contiguous().reshape(-1).view(torch.uint8),
                       b.detach().cpu().contiguous().reshape(-1).view(torch.uint8))
