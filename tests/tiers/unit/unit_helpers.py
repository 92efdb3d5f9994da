"""Shared helpers of the unit tier's own tests: a CPU context, and writing op spec files."""

from __future__ import annotations

import datetime as dt
import textwrap
from pathlib import Path

from kit.context import KitContext
from kit.pytest_plugin import build_context

TODAY = dt.date(2026, 11, 22)

#: A small, valid op spec; tests derive broken ones from it.
VALID_SPEC = """\
dims: {B: batch, H: hidden}
presets:
  small: {B: 2, H: 4}
  odd: {B: 3, H: 7}
templates:
  scaled_add:
    call: torch.add
    inputs:
      - {shape: [B, H], layout: $layout}
      - {shape: [H]}
    kwargs: {alpha: $alpha}
    vars: {alpha: [1.0, 0.5], layout: [contiguous, transposed]}
    dtypes: [float32, bfloat16]
    cases: [small, odd]
"""


def cpu_context() -> KitContext:
    return build_context("cpu", TODAY)


def write_spec(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path
