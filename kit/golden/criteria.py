"""How close a re-run must come to the stored reference outputs: the flow's own criterion.

The stored outputs are the kit's eager CPU reference, which the flow's outputs met when the
test passed; the program re-run with the reference runtime must meet the same criterion: a
tolerance for float flows, a signal-to-noise floor for quantized ones. The criteria are the
standard's (``flows.yaml``, read by the flows tier) when this kit has the flows tier; else
the fixed bounds below, which are as tight as the standard's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class Closeness:
    """Elementwise ``|re-run - stored| <= atol + rtol * |stored|`` (float flows)."""

    atol: float
    rtol: float


@dataclass(frozen=True)
class SignalToNoise:
    """``10 log10(sum stored^2 / sum (re-run - stored)^2) >= db`` (quantized flows)."""

    db: float


Criterion = Closeness | SignalToNoise

#: Without the flows tier: the bounds its standard sets for float and quantized flows.
FALLBACK_FLOAT = Closeness(atol=1e-4, rtol=1e-3)
FALLBACK_QUANTIZED = SignalToNoise(db=20.0)


def _from_standard(flow: str) -> Criterion | None:
    try:
        from kit.tiers.flows.config import (  # type: ignore[import-not-found, import-untyped, unused-ignore]
            SqnrFloor,
            flows_config,
        )
    except ImportError:  # a kit without the flows tier: the fallback bounds
        return None
    from kit.errors import InputError
    from kit.standard import load_standard

    try:
        criterion = flows_config(load_standard()).criterion(flow)
    except InputError:
        return None  # a flow the standard does not list: judged by the fallback bounds
    if isinstance(criterion, SqnrFloor):
        return SignalToNoise(float(criterion.db))
    return Closeness(float(criterion.atol), float(criterion.rtol))


def criterion_of(flow: str) -> Criterion:
    """The criterion the flow's outputs are judged by."""
    found = _from_standard(flow)
    if found is not None:
        return found
    from kit.errors import InputError
    from kit.flows import get_flow

    try:
        quantized = get_flow(flow).quantized
    except InputError:
        quantized = False  # a vendor's flow not installed here: the float bound, the tighter
    return FALLBACK_QUANTIZED if quantized else FALLBACK_FLOAT


def _is_float(tensor: torch.Tensor) -> bool:
    return tensor.is_floating_point()


def _closeness_problem(index: int, actual: torch.Tensor, expected: torch.Tensor,
                       bound: Closeness) -> str | None:
    import torch

    if torch.allclose(actual, expected, atol=bound.atol, rtol=bound.rtol, equal_nan=True):
        return None
    error = (actual.double() - expected.double()).abs().nan_to_num(float("inf")).max().item()
    return f"output {index} differs by up to {error:.3g} (atol {bound.atol}, rtol {bound.rtol})"


def _sqnr_problem(pairs: list[tuple[torch.Tensor, torch.Tensor]], floor: SignalToNoise
                  ) -> str | None:
    import torch

    if not pairs:
        return None
    actual = torch.cat([a.double().reshape(-1) for a, _ in pairs])
    expected = torch.cat([e.double().reshape(-1) for _, e in pairs])
    noise = float(((actual - expected) ** 2).sum())
    signal = float((expected**2).sum())
    if noise == 0.0:
        return None
    measured = 10 * math.log10(signal / noise) if signal > 0 else -math.inf
    if measured >= floor.db:
        return None
    return f"outputs are {measured:.1f} dB above their error, below the floor of {floor.db} dB"


def mismatch(actual: Sequence[torch.Tensor], expected: Sequence[torch.Tensor],
             criterion: Criterion) -> str | None:
    """Why the re-run's outputs do not meet ``criterion`` against the stored ones, or None.
    Integer and boolean outputs must be equal whatever the criterion."""
    import torch

    if len(actual) != len(expected):
        return f"the program gives {len(actual)} outputs, {len(expected)} are stored"
    floats = []
    for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
        if a.dtype != e.dtype or a.shape != e.shape:
            return f"output {index} is {a.dtype} {list(a.shape)}, stored {e.dtype} {list(e.shape)}"
        if not _is_float(e):
            if not torch.equal(a, e):
                return f"output {index} differs ({str(e.dtype).removeprefix('torch.')}: exact)"
        elif isinstance(criterion, Closeness):
            problem = _closeness_problem(index, a, e, criterion)
            if problem is not None:
                return problem
        else:
            floats.append((a, e))
    return _sqnr_problem(floats, criterion) if isinstance(criterion, SignalToNoise) else None
