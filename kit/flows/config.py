"""Reading ``flows.yaml``: the program flows the standard runs, and how each is judged.

    flows:
      <flow>: {tolerance: {atol: A, rtol: R}}   # float flows: |flow - eager| <= A + R * |eager|
      <flow>: {sqnr_floor_db: D}                 # quantized flows: signal-to-noise >= D dB

Every flow named must be a registered program flow (``kit.flows``), judged the way it is
declared: a quantized flow by its SQNR floor, any other by a tolerance (both criteria of
``kit.numerics.criteria``, read by ``kit.numerics.parsing``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from kit.config_reader import Node
from kit.errors import InputError
from kit.numerics.criteria import Criterion
from kit.numerics.parsing import read_sqnr_floor, read_tolerance
from kit.standard import Standard

TIER = "flows"


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
    return load_flows_config(standard.tier_file(TIER))


@functools.lru_cache(maxsize=8)
def load_flows_config(path: Path) -> FlowsConfig:
    """The flows tier file at ``path``, read once per process."""
    document = Node.read(path).section(("flows",), what="one mapping `flows: {<flow>: ...}`")
    flows = document["flows"].entries(what="a mapping of each flow to its criterion")
    return FlowsConfig(path, {flow: _criterion(node, flow) for flow, node in flows})


def _criterion(node: Node, flow: str) -> Criterion:
    from kit.flows import get_flow

    try:
        declared = get_flow(flow)
    except InputError as exc:  # an unknown flow, named with the known ones
        raise node.error(str(exc)) from None
    if declared.program_format is None:
        raise node.error("not a program flow (eager runs in the unit tier)")
    if declared.quantized:
        quantized = node.section(("sqnr_floor_db",), what="a quantized flow's sqnr_floor_db")
        return read_sqnr_floor(quantized["sqnr_floor_db"])
    tolerance = node.section(("tolerance",), what="a float flow's tolerance")["tolerance"]
    return read_tolerance(tolerance)


#: The flow every model runs through on the device itself: no program, nothing to lower.
EAGER_FLOW = "eager"


def refuse_untested_claims(standard: Standard, claimed: tuple[str, ...]) -> None:
    """A claimed flow the standard's flows tier does not run (a vendor's own, registered by
    entry point) would be listed as claimed in the signed report and never tested: refused.
    A standard that lists the flow in its ``flows.yaml`` plans and runs it like a built-in."""
    tested = (EAGER_FLOW, *flows_config(standard).flows)
    untested = [flow for flow in claimed if flow not in tested]
    if untested:
        raise InputError(
            f"claimed flow {untested[0]!r} is not tested by standard {standard.version} (its "
            f"flows tier runs {', '.join(tested)}): a claim no test checks is never signed; "
            "leave it out of vendor.yaml flows / --flows"
        )
