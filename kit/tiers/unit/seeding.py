"""Deterministic randomness for unit cases, without disturbing the tests around them."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator

import torch


@contextlib.contextmanager
def seeded_rngs(seed: int) -> Iterator[None]:
    """Seed torch's CPU generator and Python's ``random`` (some OpInfo sample functions draw
    from it) for the block, then restore both.

    The CPU generator alone: ``torch.manual_seed`` would also reseed every device backend's
    generators, which ``fork_rng(devices=[])`` does not restore, and costs a formatted stack
    per lazily initialised backend (CUDA, XPU, ...) on every call: a millisecond per test."""
    python_state = random.getstate()
    with torch.random.fork_rng(devices=[]):
        torch.default_generator.manual_seed(seed)
        random.seed(seed)
        try:
            yield
        finally:
            random.setstate(python_state)
