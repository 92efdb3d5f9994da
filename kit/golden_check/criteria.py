"""How close a re-run must come to the stored reference outputs: the flow's own criterion.

The stored outputs are the kit's eager CPU reference, which the flow's outputs met when the
test passed; the program re-run with the reference runtime must meet the same criterion
(``kit.numerics.criteria``): a tolerance for float flows, a signal-to-noise floor for quantized
ones. The criteria are the standard's (``flows.yaml``, read by ``kit.flows.config``; a model's
``models.yaml`` tolerance, read by the models tier when this kit has it); else the fixed bounds
below, which are as tight as the standard's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kit.numerics.criteria import Criterion, SqnrFloor, Tolerance

if TYPE_CHECKING:
    import torch

#: For a flow the standard does not list: the bounds it sets for float and quantized flows.
FALLBACK_FLOAT = Tolerance(atol=1e-4, rtol=1e-3)
FALLBACK_QUANTIZED = SqnrFloor(db=20.0)


def _from_standard(flow: str) -> Criterion | None:
    from kit.errors import InputError
    from kit.flows.config import flows_config
    from kit.standard import load_standard

    try:
        criterion: Criterion = flows_config(load_standard()).criterion(flow)
    except InputError:
        return None  # a flow the standard does not list: judged by the fallback bounds
    return criterion


def _from_models_tier(flow: str, test_id: str) -> Criterion | None:
    """A model's program is judged by the model's own tolerance (``models.yaml``), not by the
    flows tier's bound for ops."""
    if not test_id.startswith("models/"):
        return None
    try:
        from kit.tiers.models.cases import (  # type: ignore[import-not-found, import-untyped, unused-ignore]
            find_case,
            model_flow_criterion,
        )
    except ImportError:  # a kit without the models tier: the flow's bound
        return None
    from kit.errors import InputError
    from kit.standard import load_standard

    standard = load_standard()
    try:
        criterion: Criterion = model_flow_criterion(standard, find_case(standard, test_id))
    except InputError:
        return None  # a model the standard does not list: judged by the flow's bound
    return criterion


def criterion_of(flow: str, test_id: str = "") -> Criterion:
    """The criterion the outputs of ``test_id`` through ``flow`` are judged by."""
    found = _from_models_tier(flow, test_id) or _from_standard(flow)
    if found is not None:
        return found
    from kit.errors import InputError
    from kit.flows import get_flow

    try:
        quantized = get_flow(flow).quantized
    except InputError:
        quantized = False  # a vendor's flow not installed here: the float bound, the tighter
    return FALLBACK_QUANTIZED if quantized else FALLBACK_FLOAT


def mismatch(actual: Sequence[torch.Tensor], expected: Sequence[torch.Tensor],
             criterion: Criterion) -> str | None:
    """Why the re-run's outputs do not meet ``criterion`` against the stored ones, or None.
    Integer and boolean outputs must be equal whatever the criterion."""
    if len(actual) != len(expected):
        return f"the program gives {len(actual)} outputs, {len(expected)} are stored"
    for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
        if a.dtype != e.dtype or a.shape != e.shape:
            return f"output {index} is {a.dtype} {list(a.shape)}, stored {e.dtype} {list(e.shape)}"
    return criterion.judge(tuple(actual), tuple(expected)).problem
