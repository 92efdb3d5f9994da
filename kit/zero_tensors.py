"""Efficient zero tensors under the kit's dispatch modes.

Autograd passes a derivative it knows to be zero as an efficient zero tensor (a ZeroTensor:
forward AD's tangent of an input that has none, such as ``ldexp``'s integer exponent; a second
derivative of ``abs``), which holds no memory. PyTorch's ZeroTensor fallback materializes it
before any backend kernel reads it; a ``TorchDispatchMode`` runs past that fallback, so an op
it calls on a ZeroTensor reads null memory and the process segfaults (torch 2.14.1:
``aten::mul.Scalar``). The kit's modes (attribution, random draws, ATen traces) call each op
on ``materialized`` arguments instead: what a backend kernel would have been given anyway.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils._pytree import tree_leaves, tree_map


def materialized(args: Any, kwargs: Any) -> tuple[Any, Any]:
    """``args`` and ``kwargs`` with every ZeroTensor a plain zero tensor of its shape and
    dtype on its device (unchanged, and not copied, where none is one)."""
    if not any(_is_zero(leaf) for leaf in tree_leaves((args, kwargs))):
        return args, kwargs
    plain = tree_map(_plain, (args, kwargs))
    return plain[0], plain[1]


def _is_zero(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value._is_zerotensor()


def _plain(value: Any) -> Any:
    if not _is_zero(value):
        return value
    return torch.zeros(value.shape, dtype=value.dtype, device=value.device)
