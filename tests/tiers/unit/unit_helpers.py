"""Shared helpers of the unit tier's own tests: a CPU context, writing op spec files, a real
`ckit run` of selected unit tests (simnpu faults planted through ``SIMNPU_FAULTS``), and the
runs that several modules share: two planted-fault simnpu runs (``plant``, ``plant_apart``) and
one fault-free cpu run (``on_clean_cpu``)."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from planting_helpers import PlantedRun

from kit.context import KitContext
from kit.patterns import select_ids
from kit.pytest_plugin import build_context
from kit.standard import load_standard

TODAY = dt.date(2026, 11, 22)

#: Heavy tests regenerating the whole unit tier in the test's own process (``ckit standard
#: lock`` called in-process): one xdist worker runs them one after the other, so each later one
#: finds OpInfo's samples and the built variants in memory instead of generating them again.
REGENERATES_THE_UNIT_TIER = pytest.mark.xdist_group("regenerates-the-unit-tier")

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


#: What the modules importing ``plant`` registered: one ``ckit run`` (the ``planted_run``
#: fixture of conftest.py) plants every fault and runs every test, instead of one run each.
PLANTED = PlantedRun()


def plant(faults: list[dict[str, Any]], tests: list[str]) -> None:
    PLANTED.plant(faults, tests)


#: A second shared planted run (the ``planted_apart_run`` fixture), for what cannot join
#: ``PLANTED``: faults that fire on its tests (a gradient-accumulation fault fires on every
#: backward test there) and checks that need its faults absent (every conversion passing
#: beside a conversion fault).
PLANTED_APART = PlantedRun()


def plant_apart(faults: list[dict[str, Any]], tests: list[str]) -> None:
    PLANTED_APART.plant(faults, tests)


#: The selections (patterns) modules check on one fault-free cpu run (the ``clean_cpu_run``
#: fixture), registered at import like ``PLANTED``.
CLEAN_CPU: list[str] = []


def on_clean_cpu(selects: list[str]) -> list[str]:
    """Register ``selects`` for the shared fault-free cpu run; returns them."""
    CLEAN_CPU.extend(selects)
    return selects


@dataclass(frozen=True)
class UnitRun:
    """A finished ``ckit run``: its exit status, its output directory and its report.json."""

    returncode: int
    out: Path
    report: dict[str, Any]

    @property
    def records(self) -> dict[str, dict[str, Any]]:
        return {r["id"]: r for r in self.report["records"]}


def run_unit(vendor: str, selects: list[str], tmp_path: Path, faults: list[Any]
             ) -> dict[str, dict[str, Any]]:
    """The records of ``unit_run``, by test id."""
    return unit_run(vendor, selects, tmp_path, faults).records


def run_unit_report(vendor: str, selects: list[str], tmp_path: Path, faults: list[Any]
                    ) -> dict[str, Any]:
    """The report.json of ``unit_run``."""
    return unit_run(vendor, selects, tmp_path, faults).report


def unit_run(vendor: str, selects: list[str], tmp_path: Path, faults: list[Any]) -> UnitRun:
    """``ckit run --tier unit --select ...`` on ``vendor`` (unsigned), with the simnpu
    ``faults`` planted. Two workers only for a selection big enough to repay the second
    worker's start-up."""
    env = {**os.environ, "SIMNPU_FAULTS": json.dumps(faults),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    out = tmp_path / f"out-{vendor}"
    args = [a for pattern in selects for a in ("--select", pattern)]
    workers = "2" if len(select_ids(load_standard().test_ids("unit"), selects)) > 200 else "1"
    done = subprocess.run(
        [sys.executable, "-m", "kit", "run", "--vendor", vendor, "--tier", "unit", *args,
         "--workers", workers, "--no-sign", "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=900, check=False,
    )
    assert (out / "report.json").exists(), done.stderr[-3000:]
    return UnitRun(done.returncode, out, json.loads((out / "report.json").read_text()))

