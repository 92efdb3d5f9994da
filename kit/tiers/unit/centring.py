"""The uncentred magnitude ``U`` of a normalization: the terms it rounds before its mean is off.

A normalization computes ``(x - mean) * r * weight + bias`` with ``r = 1/sqrt(var + eps)``.
However a kernel orders it (PyTorch's own decomposition, CPU's fused ``x * a + (bias - mean *
a)``), it rounds terms as large as ``(|x| + |mean|) * r * |weight|`` in its accumulation dtype
and then subtracts them: where the input sits far from zero relative to its spread (one
element, whose output is the bias exactly), that cancels far below the result's own magnitude,
and a bound scaled by the result alone fails a correct kernel (``layer_norm/float64/2``: 1.7e-13
relative). ``U`` is the largest such term, computed in float64 from the case's inputs with the
statistics the op normalizes by. The ops whose class the standard declares ``centred`` need a
rule here; one without is a curation error, named when its bound is asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from kit.errors import InputError

#: PyTorch's default ``eps`` of the normalizations below.
DEFAULT_EPS = 1e-5

#: ``(mean, r, weight)`` broadcastable to the input: what an op normalizes its input by.
Statistics = tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]


def uncentred_magnitude(op: str, inputs: Any) -> float:
    """``max (|x| + |mean|) * r * |weight|`` over the finite elements of ``op``'s normalized
    input, from its float64 ``(args, kwargs)``; 0 for an empty input."""
    rule = _RULES.get(op)
    if rule is None:
        raise InputError(
            f"op {op!r} is in a centred op class, but the kit knows no statistics of it "
            f"(kit/tiers/unit/centring.py knows {', '.join(sorted(_RULES))})"
        )
    args, kwargs = inputs
    x = args[0]
    if not isinstance(x, torch.Tensor) or x.numel() == 0:
        return 0.0
    x = x.detach().to(torch.float64)
    mean, r, weight = rule(x, args, kwargs)
    terms = (x.abs() + mean.abs()) * r * (1.0 if weight is None else weight.abs())
    finite = terms[torch.isfinite(terms)]
    return float(finite.max()) if finite.numel() else 0.0


def _argument(args: Sequence[Any], kwargs: Mapping[str, object], index: int, name: str,
              default: Any) -> Any:
    if name in kwargs:
        return kwargs[name]
    return args[index] if len(args) > index else default


def _wide(value: Any) -> torch.Tensor | None:
    return value.detach().to(torch.float64) if isinstance(value, torch.Tensor) else None


def _channel_view(value: Any, x: torch.Tensor) -> torch.Tensor | None:
    """A per-channel tensor (dim 1 of ``x``) shaped to broadcast against ``x``."""
    wide = _wide(value)
    if wide is None:
        return None
    return wide.reshape(1, -1, *([1] * (x.dim() - 2)))


def _layer_norm(x: torch.Tensor, args: Sequence[Any], kwargs: Mapping[str, object]) -> Statistics:
    shape = tuple(_argument(args, kwargs, 1, "normalized_shape", ()))
    eps = float(_argument(args, kwargs, 4, "eps", DEFAULT_EPS))
    dims = tuple(range(x.dim() - len(shape), x.dim()))
    var, mean = torch.var_mean(x, dim=dims, correction=0, keepdim=True)
    return mean, torch.rsqrt(var + eps), _wide(_argument(args, kwargs, 2, "weight", None))


def _group_norm(x: torch.Tensor, args: Sequence[Any], kwargs: Mapping[str, object]) -> Statistics:
    groups = int(_argument(args, kwargs, 1, "num_groups", 1))
    eps = float(_argument(args, kwargs, 4, "eps", DEFAULT_EPS))
    grouped = x.reshape(x.shape[0], groups, -1)
    var, mean = torch.var_mean(grouped, dim=-1, correction=0, keepdim=True)
    mean = mean.expand_as(grouped).reshape(x.shape)
    r = torch.rsqrt(var + eps).expand_as(grouped).reshape(x.shape)
    return mean, r, _channel_view(_argument(args, kwargs, 2, "weight", None), x)


def _batch_norm(x: torch.Tensor, args: Sequence[Any], kwargs: Mapping[str, object]) -> Statistics:
    running_mean = _argument(args, kwargs, 1, "running_mean", None)
    running_var = _argument(args, kwargs, 2, "running_var", None)
    training = bool(_argument(args, kwargs, 5, "training", False))
    eps = float(_argument(args, kwargs, 7, "eps", DEFAULT_EPS))
    weight = _channel_view(_argument(args, kwargs, 3, "weight", None), x)
    if training or running_mean is None or running_var is None:
        dims = (0, *range(2, x.dim()))
        var, mean = torch.var_mean(x, dim=dims, correction=0, keepdim=True)
        return mean, torch.rsqrt(var + eps), weight
    running = _channel_view(running_mean, x), _channel_view(running_var, x)
    if running[0] is None or running[1] is None:
        raise InputError("batch_norm: running statistics that are not tensors")
    return running[0], torch.rsqrt(running[1] + eps), weight


_RULES: dict[str, Callable[[torch.Tensor, Sequence[Any], Mapping[str, object]], Statistics]] = {
    "nn.functional.layer_norm": _layer_norm,
    "nn.functional.group_norm": _group_norm,
    "nn.functional.batch_norm": _batch_norm,
}
