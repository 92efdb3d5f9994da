"""Deterministic example inputs described in ``models.yaml``.

An ``inputs`` field maps argument names to specs, called in the listed order:

* ``{kind: tokens, shape: [2, 8], high: 96}``: int64 token ids uniform in ``[0, high)``;
* ``{kind: padding_mask, shape: [2, 8], padded: 2}``: an int64 attention mask of ones whose last
  row ends in ``padded`` zeros (right padding, so every query still sees a real key and the mask
  path is exercised without fully masked rows);
* ``{kind: normal, shape: [2, 3, 32, 32]}``: float32 standard normal values (images, audio).

Values come from a CPU generator seeded per model and argument, never from the global RNG.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from kit.errors import InputError
from kit.tiers.models.interface import seed_for

KINDS = ("tokens", "padding_mask", "normal")


def validate_inputs(value: Any, where: str) -> None:
    """Raise a one-line ``InputError`` naming ``where`` when an inputs mapping is malformed."""
    if not isinstance(value, Mapping) or not value:
        raise InputError(f"{where}: expected a non-empty mapping of argument name to input spec")
    for name, spec in value.items():
        _validate_spec(spec, f"{where}.{name}")


def _validate_spec(spec: Any, where: str) -> None:
    if not isinstance(spec, Mapping):
        raise InputError(f"{where}: expected a mapping with kind and shape")
    kind = spec.get("kind")
    if kind not in KINDS:
        raise InputError(f"{where}.kind: expected one of {list(KINDS)}, got {kind!r}")
    shape = spec.get("shape")
    if not isinstance(shape, list) or not shape or not all(_positive_int(n) for n in shape):
        raise InputError(f"{where}.shape: expected a non-empty list of positive integers")
    required = {"tokens": ("high",), "padding_mask": ("padded",), "normal": ()}[kind]
    allowed = {"kind", "shape", *required}
    if set(spec) != allowed:
        raise InputError(f"{where}: a {kind} input has exactly the keys {sorted(allowed)}")
    if kind == "tokens" and not _positive_int(spec["high"]):
        raise InputError(f"{where}.high: expected a positive integer")
    if kind == "padding_mask" and not (
        isinstance(spec["padded"], int) and 0 <= spec["padded"] < shape[-1]
    ):
        raise InputError(f"{where}.padded: expected an integer in [0, {shape[-1]})")


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def make_inputs(specs: Mapping[str, Mapping[str, Any]], seed: int) -> dict[str, torch.Tensor]:
    """The example inputs, in the order listed; the same ``seed`` gives the same bits."""
    return {name: _make_input(spec, seed_for(f"{seed}/{name}")) for name, spec in specs.items()}


def _make_input(spec: Mapping[str, Any], seed: int) -> torch.Tensor:
    generator = torch.Generator(device="cpu").manual_seed(seed)
    shape = tuple(spec["shape"])
    kind = spec["kind"]
    if kind == "tokens":
        return torch.randint(0, spec["high"], shape, generator=generator, dtype=torch.int64)
    if kind == "padding_mask":
        mask = torch.ones(shape, dtype=torch.int64)
        if spec["padded"]:
            mask.view(-1, shape[-1])[-1, -spec["padded"]:] = 0
        return mask
    return torch.randn(shape, generator=generator, dtype=torch.float32)
