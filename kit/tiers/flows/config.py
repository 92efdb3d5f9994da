"""Reading ``flows.yaml``: the program flows the standard runs, and how each is judged.

    flows:
      <flow>: {tolerance: {atol: A, rtol: R}}   # float flows: |flow - eager| <= A + R * |eager|
      <flow>: {sqnr_floor_db: D}                 # quantized flows: signal-to-noise >= D dB

Every flow named must be a registered program flow (``kit.flows``), judged the way it is
declared: a quantized flow by its SQNR floor, any other by a tolerance.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit.errors import InputError
from kit.standard import Standard, Tolerance
from kit.yamlio import load_yaml

TIER = "flows"


@dataclass(frozen=True)
class SqnrFloor:
    """Quantized outputs pass when 10 log10(|ref|^2 / |out - ref|^2) is at least ``db``."""

    db: float


#: How one flow's outputs are judged against their reference.
Criterion = Tolerance | SqnrFloor


@dataclass(frozen=True)
class FlowsConfig:
    path: Path
    #: Per flow, in the file's order: its criterion against eager CPU float32.
    criteria: dict[str, Criterion]

    @property
    def flows(self) -> tuple[str, ...]:
        return tuple(self.criteria)

    def criterion(self, flow: str) -> Criterion:
        try:
            return self.criteria[flow]
        except KeyError:
            raise InputError(f"{self.path}: flow {flow!r} is not listed") from None


def flows_config(standard: Standard) -> FlowsConfig:
    return _load(standard.tier_file(TIER))


@functools.lru_cache(maxsize=8)
def _load(path: Path) -> FlowsConfig:
    data = load_yaml(path)
    if not isinstance(data, dict) or set(data) != {"flows"} or not isinstance(data["flows"], dict):
        raise InputError(f"{path}: expected one mapping `flows: {{<flow>: ...}}`")
    entries = data["flows"].items()
    return FlowsConfig(path, {str(f): _criterion(path, str(f), v) for f, v in entries})


def _criterion(path: Path, flow: str, entry: Any) -> Criterion:
    from kit.flows import get_flow

    quantized = get_flow(flow).quantized  # an unknown flow is an InputError naming the known
    if get_flow(flow).program_format is None:
        raise InputError(f"{path}: flows.{flow}: not a program flow (eager runs in the unit tier)")
    wanted = "sqnr_floor_db" if quantized else "tolerance"
    if not isinstance(entry, dict) or set(entry) != {wanted}:
        raise InputError(f"{path}: flows.{flow}: expected exactly `{wanted}` "
                         f"({'a quantized' if quantized else 'a float'} flow)")
    try:
        if quantized:
            return SqnrFloor(float(entry[wanted]))
        return Tolerance(float(entry[wanted]["atol"]), float(entry[wanted]["rtol"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{path}: flows.{flow}.{wanted}: malformed ({exc})") from None
