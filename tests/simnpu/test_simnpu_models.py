"""Small models run on simnpu and match a float64 CPU reference within the float32 tolerance."""

from __future__ import annotations

import copy

import simnpu  # noqa: F401  (registers the device)
import torch
from torch import nn

from kit.numerics.judging import assert_close
from kit.standard import load_standard

DEVICE = "simnpu"
FLOAT32 = load_standard().tolerance("float32")


class RMSNorm(nn.Module):
    def __init__(self, width: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


class LlamaStyleBlock(nn.Module):
    """Embedding, RMSNorm, rotary attention with a causal mask, SwiGLU MLP: what Llama runs."""

    def __init__(self, vocab: int = 50, width: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.embed = nn.Embedding(vocab, width)
        self.norm = RMSNorm(width)
        self.qkv = nn.Linear(width, 3 * width, bias=False)
        self.out = nn.Linear(width, width, bias=False)
        self.gate = nn.Linear(width, 2 * width, bias=False)
        self.up = nn.Linear(width, 2 * width, bias=False)
        self.down = nn.Linear(2 * width, width, bias=False)

    def _rotary(self, x: torch.Tensor) -> torch.Tensor:
        length, dim = x.shape[-2], x.shape[-1]
        inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2, device=x.device).to(x.dtype) / dim))
        angles = torch.outer(torch.arange(length, device=x.device).to(x.dtype), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        return x * angles.cos() + _rotate_half(x) * angles.sin()

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = self.embed(ids)
        batch, length, width = h.shape
        q, k, v = self.qkv(self.norm(h)).split(width, dim=-1)
        q, k, v = (t.view(batch, length, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        q, k = self._rotary(q), self._rotary(k)
        scores = q @ k.transpose(-2, -1) / (q.shape[-1] ** 0.5)
        mask = torch.full((length, length), float("-inf"), device=h.device).triu(1)
        attention = torch.softmax(scores + mask.to(scores.dtype), dim=-1) @ v
        h = h + self.out(attention.transpose(1, 2).reshape(batch, length, width))
        x = self.norm(h)
        return h + self.down(nn.functional.silu(self.gate(x)) * self.up(x))


def _mlp() -> nn.Module:
    return nn.Sequential(
        nn.Linear(24, 64),
        nn.GELU(),
        nn.LayerNorm(64),
        nn.Dropout(0.0),
        nn.Linear(64, 8),
        nn.Softmax(dim=-1),
    )


def _run_on_device_and_reference(
    model: nn.Module, inputs: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    model.eval()
    reference_model = copy.deepcopy(model).double()
    reference_inputs = inputs.double() if inputs.is_floating_point() else inputs
    with torch.no_grad():
        reference = reference_model(reference_inputs)
        on_device = model.to(DEVICE)(inputs.to(DEVICE))
    assert on_device.device.type == DEVICE
    return on_device.cpu(), reference


def test_mlp_matches_float64_reference() -> None:
    torch.manual_seed(0)
    on_device, reference = _run_on_device_and_reference(_mlp(), torch.randn(16, 24))
    assert on_device.dtype == torch.float32
    assert_close(on_device, reference, FLOAT32)


def test_llama_style_block_matches_float64_reference() -> None:
    torch.manual_seed(0)
    ids = torch.randint(0, 50, (2, 12))
    on_device, reference = _run_on_device_and_reference(LlamaStyleBlock(), ids)
    assert on_device.shape == (2, 12, 32)
    assert_close(on_device, reference, FLOAT32)


def test_llama_style_block_gradients_match_cpu() -> None:
    torch.manual_seed(0)
    model = LlamaStyleBlock()
    ids = torch.randint(0, 50, (1, 6))
    model(ids).square().mean().backward()
    expected = {name: p.grad.clone() for name, p in model.named_parameters()}
    model.zero_grad(set_to_none=True)
    model.to(DEVICE)(ids.to(DEVICE)).square().mean().backward()
    for name, parameter in model.named_parameters():
        assert parameter.grad.device.type == DEVICE, name
        assert_close(parameter.grad.cpu(), expected[name], FLOAT32, where=name)
