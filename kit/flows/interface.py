"""What every flow provides: a lowering recipe and a runtime, each stage apart.

A flow is a backend, a quantization scheme and a lowering recipe (``executorch_xnnpack``,
``executorch_xnnpack_int8``, ``onnxruntime_cpu``; ``eager`` is the module run as it is). The
kit runs a *subject* (a module of the kit's own and its example inputs: an op wrapped in a
module, or a whole model) through its stages, in the vendor's process:

    export -> lower -> serialize -> load -> run

and keeps what each stage did (``FlowRun``) on every record, passing or not. The flow never
judges: the kit compares the outputs with eager CPU in its own process.
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch


class Stage(enum.StrEnum):
    """How far a subject got through its flow; the last four are the kit's judgement."""

    #: ``torch.export`` of the kit's own subject failed: a kit error, never a skip.
    EXPORT_FAIL = "EXPORT_FAIL"
    LOWER_FAIL = "LOWER_FAIL"
    SERIALIZE_FAIL = "SERIALIZE_FAIL"
    LOAD_FAIL = "LOAD_FAIL"
    RUN_FAIL = "RUN_FAIL"
    #: Ran, but the partitioner delegated nothing to the backend: never a pass.
    NOT_DELEGATED = "NOT_DELEGATED"
    FAIL_NUMERIC = "FAIL_NUMERIC"
    PASS = "PASS"
    #: Every stage of the device half ran; the kit has not judged the outputs yet.
    RAN = "RAN"


#: The device stages in order, with the failure each one ends in.
DEVICE_STAGES: tuple[tuple[str, Stage], ...] = (
    ("export", Stage.EXPORT_FAIL),
    ("lower", Stage.LOWER_FAIL),
    ("serialize", Stage.SERIALIZE_FAIL),
    ("load", Stage.LOAD_FAIL),
    ("run", Stage.RUN_FAIL),
)


@dataclass(frozen=True)
class Subject:
    """What goes through a flow: a CPU float32 module of the kit's and positional inputs.

    Both are rebuilt from the test id with seeded values, identically in every process.
    """

    test_id: str
    module: torch.nn.Module
    inputs: tuple[torch.Tensor, ...]


@dataclass(frozen=True)
class Lowered:
    """A serialized program and what the lowering left out of the backend."""

    data: bytes
    #: File suffix and reference runtime of the program: ``pte`` or ``onnx``.
    format: str
    #: Operator nodes the backend runs (inside delegates, or assigned to the execution provider).
    delegated_ops: int
    #: Operator nodes left outside the backend, by operator name.
    undelegated_ops: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class FlowRun:
    """The device half of one subject through one flow: the stages' facts, kept on the record."""

    flow: str
    #: ``Stage.RAN`` when every device stage ran, else the failure it ended in.
    stage: Stage
    #: The program's outputs as CPU tensors, flattened in output order (None unless RAN).
    outputs: tuple[torch.Tensor, ...] | None = None
    program: Lowered | None = None
    #: Seconds per stage that ran (``export``, ``lower``, ``serialize``, ``load``, ``run``).
    timings: Mapping[str, float] = field(default_factory=dict)
    #: The failing stage's error, one line (empty when RAN).
    error: str = ""
    #: Whether the program came from the program cache instead of a fresh lowering.
    cached: bool = False


#: Options of a flow from the vendor profile (``flow_options: {<flow>: {...}}``): a
#: partitioner, an ONNX Runtime execution provider, a quantization scheme.
FlowOptions = Mapping[str, Any]

#: A loaded program: positional CPU inputs in, flattened outputs back.
Executable = Callable[[Sequence["torch.Tensor"]], Sequence["torch.Tensor"]]


class Flow(abc.ABC):
    """One extension axis of the kit: how a subject reaches the backend.

    A vendor adds its own by an entry point in group ``ckit.flows`` naming a ``Flow`` subclass
    (``kit.flows.ENTRY_POINT_GROUP``); its name must not be a built-in one.
    """

    #: The flow's id in vendor profiles, standards and test ids.
    name: str
    #: The runtime that can re-run its programs (``pte``, ``onnx``); None for eager.
    program_format: str | None = None
    #: Whether outputs are judged by signal-to-noise (quantized flows) instead of a tolerance.
    quantized: bool = False
    #: Whether a program that delegated nothing is NOT_DELEGATED (a backend flow) or fine. The
    #: judge never loads a vendor's class, so a vendor's flow is judged by this default.
    requires_delegation: bool = True

    @abc.abstractmethod
    def unavailable_reason(self) -> str | None:
        """Why the flow cannot run here (a package is missing), or None; imports nothing heavy
        when the package is absent."""

    def option_problem(self, options: FlowOptions) -> str | None:
        """What is wrong with the vendor's options for this flow, or None (checked at load)."""
        return None if not options else f"flow {self.name} takes no options"

    @abc.abstractmethod
    def lower(self, exported: Any, subject: Subject, options: FlowOptions) -> Any:
        """Lower an exported program (``torch.export.ExportedProgram``) for the backend;
        quantized flows calibrate on ``subject.inputs``."""

    @abc.abstractmethod
    def serialize(self, lowered: Any) -> Lowered:
        """The lowered program as bytes, with its delegation figures."""

    @abc.abstractmethod
    def load(self, data: bytes, options: FlowOptions) -> Executable:
        """Load serialized bytes into the flow's runtime."""
