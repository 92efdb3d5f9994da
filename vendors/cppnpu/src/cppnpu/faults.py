"""Fault injection: ``CPPNPU_FAULTS=add,where`` makes those native kernels compute wrong results.

Only the native kernels can be broken (``NATIVE_OPS``): every other op runs PyTorch's own CPU
kernel through the fallback. A faulty kernel returns floating ``x * 1.25 + 1``, integers
``x + 1`` and booleans flipped, far outside any tolerance (non-finite values stay non-finite).
The library holds the set (``torch.ops.cppnpu.set_faults``); this module parses and checks it.
"""

from __future__ import annotations

import os

import torch

FAULTS_ENV = "CPPNPU_FAULTS"
#: The ops with a native kernel in csrc/cppnpu.cpp, by the name CPPNPU_FAULTS uses.
NATIVE_OPS = ("add", "mul", "relu", "where", "index_select")

_active: tuple[str, ...] = ()


class FaultConfigError(ValueError):
    """CPPNPU_FAULTS names something that is not a native op."""


def parse(text: str) -> tuple[str, ...]:
    """The op names of a comma-separated list, each checked against ``NATIVE_OPS``."""
    names = tuple(sorted({name.strip() for name in text.split(",") if name.strip()}))
    unknown = [name for name in names if name not in NATIVE_OPS]
    if unknown:
        raise FaultConfigError(
            f"{FAULTS_ENV}: {', '.join(unknown)} is not a native cppnpu op "
            f"(expected a comma-separated list of: {', '.join(NATIVE_OPS)})"
        )
    return names


def from_environment() -> tuple[str, ...]:
    return parse(os.environ.get(FAULTS_ENV, ""))


def set_faulty_ops(names: tuple[str, ...]) -> None:
    """Make exactly ``names`` (native op names) compute wrong results from now on."""
    global _active
    torch.ops.cppnpu.set_faults(list(parse(",".join(names))))
    _active = names


def active() -> tuple[str, ...]:
    return _active
