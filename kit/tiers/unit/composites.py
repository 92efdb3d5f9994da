"""Small composites of ops that real models use, as call targets for YAML op specs.

Each computes in the dtype of its inputs, except where real models deliberately compute in
float32 (rotary angles, RMS statistics); there they compute in float32 or wider, so the float64
reference stays float64.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def _at_least_float32(dtype: torch.dtype) -> torch.dtype:
    return torch.promote_types(dtype, torch.float32)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


def rotary_embedding(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotary position embedding of ``x`` shaped [batch, heads, seq, head_dim] (Llama style)."""
    seq, head_dim = x.shape[-2], x.shape[-1]
    compute = _at_least_float32(x.dtype)
    exponents = torch.arange(0, head_dim, 2, device=x.device, dtype=compute) / head_dim
    inv_freq = 1.0 / (base**exponents)
    positions = torch.arange(seq, device=x.device, dtype=compute)
    angles = torch.outer(positions, inv_freq)
    angles = torch.cat((angles, angles), dim=-1)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    return x * cos + rotate_half(x) * sin


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Attention written out op by op: matmul, scale, causal mask, softmax, matmul."""
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    seq_q, seq_k = scores.shape[-2], scores.shape[-1]
    future = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
    scores = scores.masked_fill(future, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), v)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMSNorm with the statistics in float32 or wider, as Llama-family models compute it."""
    wide = x.to(_at_least_float32(x.dtype))
    normed = wide * torch.rsqrt(wide.pow(2).mean(-1, keepdim=True) + eps)
    return weight * normed.to(x.dtype)


def swiglu_mlp(
    x: torch.Tensor, w_gate: torch.Tensor, w_up: torch.Tensor, w_down: torch.Tensor
) -> torch.Tensor:
    """The gated MLP of Llama-family models: down(silu(gate(x)) * up(x))."""
    return F.linear(F.silu(F.linear(x, w_gate)) * F.linear(x, w_up), w_down)


def index_put_rows(
    x: torch.Tensor, index: torch.Tensor, values: torch.Tensor, accumulate: bool = False
) -> torch.Tensor:
    """``x.index_put((index,), values, accumulate)``: the rows of ``x`` one index tensor picks
    (an op spec passes its tensors one by one, not in the tuple ``index_put`` takes)."""
    return x.index_put((index,), values, accumulate=accumulate)
