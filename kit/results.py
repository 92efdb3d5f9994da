"""The result data model shared by the runner, the report formats and the verifier."""

from __future__ import annotations

import copy
import enum
from collections.abc import Collection
from dataclasses import asdict, dataclass, field, is_dataclass
from typing import Any, Protocol

from kit.test_ids import tier_of as tier_of  # re-exported: records name their tier by it


class Status(enum.StrEnum):
    PASS = "PASS"
    #: Ran, but the values differ from the reference beyond the standard's tolerance.
    FAIL_NUMERIC = "FAIL_NUMERIC"
    #: Ran, but behaved unlike CPU in something its values cannot show: a result's dtype, shape,
    #: strides or structure, a view that is a copy, a stale repeat, a missing error
    #: (``details["failure"]`` names which). Checked before the values are.
    FAIL_SEMANTIC = "FAIL_SEMANTIC"
    #: Raised an unexpected exception (not "not implemented").
    ERROR = "ERROR"
    #: The op/feature is not implemented on the device (NotImplementedError and friends).
    UNSUPPORTED = "UNSUPPORTED"
    #: The worker process died (segfault, abort, OOM kill) while running the test.
    CRASH = "CRASH"
    #: The test ran past its time limit; the worker was killed.
    TIMEOUT = "TIMEOUT"
    #: Skipped by a valid entry of the vendor's skip manifest.
    SKIPPED = "SKIPPED"
    #: Does not apply to this vendor or environment, for one of the kit's reasons
    #: (``NotApplicableReason``, recorded as ``details["na_reason"]``).
    NOT_APPLICABLE = "NOT_APPLICABLE"
    #: A program flow ran, but its backend took none of the subject's ops: never a pass.
    NOT_DELEGATED = "NOT_DELEGATED"

    @property
    def is_failure(self) -> bool:
        return self in FAILURE_STATUSES


FAILURE_STATUSES = frozenset(
    {
        Status.FAIL_NUMERIC,
        Status.FAIL_SEMANTIC,
        Status.ERROR,
        Status.UNSUPPORTED,
        Status.CRASH,
        Status.TIMEOUT,
        Status.NOT_DELEGATED,
    }
)

#: A test that did not run: skipped by the vendor's manifest, or not applicable by the kit.
NOT_RUN_STATUSES = frozenset({Status.SKIPPED, Status.NOT_APPLICABLE})

#: What a standard that does not declare a status (its report schema predates it) records
#: instead: the status that covered the same failures before. Standard v1 knew no FAIL_SEMANTIC,
#: and its reports keep recording such failures as FAIL_NUMERIC.
STATUS_FALLBACKS: dict[Status, Status] = {Status.FAIL_SEMANTIC: Status.FAIL_NUMERIC}


def declared_status(status: Status, declared: Collection[Status]) -> Status:
    """``status`` as a standard declaring ``declared`` records it: itself, else its fallback."""
    while status not in declared and status in STATUS_FALLBACKS:
        status = STATUS_FALLBACKS[status]
    return status


class NotApplicableReason(enum.StrEnum):
    """The only reasons a test may be NOT_APPLICABLE, each decided by the kit itself.

    The record carries the code as ``details[NA_REASON_KEY]``. A NOT_APPLICABLE record without
    one of these codes (a vendor kernel calling ``pytest.skip``, say) counts against the grade.
    """

    #: The vendor profile does not claim the test's dtype (vendor.yaml ``dtypes``).
    UNCLAIMED_DTYPE = "unclaimed-dtype"
    #: The vendor profile does not claim the model test's flow (vendor.yaml ``flows``).
    UNCLAIMED_FLOW = "unclaimed-flow"
    #: An optional model source (TIMM, TorchBench), or a package one of its models needs, is
    #: not installed (or does not import); the standard lets a vendor leave those out.
    OPTIONAL_SOURCE_ABSENT = "optional-source-absent"
    #: A flow the vendor claims needs packages that are not installed (the flow's
    #: ``unavailable_reason``); the kit decides it before any stage runs.
    FLOW_NOT_INSTALLED = "flow-not-installed"
    #: A unit ``scale`` test's estimated footprint exceeds the memory budget (the standard's,
    #: lowered by the vendor's declared ``device_memory_mib``).
    EXCEEDS_MEMORY_BUDGET = "exceeds-memory-budget"
    #: A unit sample whose CPU call draws random numbers (SDPA with ``dropout_p > 0``): the
    #: device draws its own, so its values are never compared with CPU's; the judge decides it
    #: after the result's structure, dtypes and shapes held (a standard's ``coverage.random``).
    DRAWS_RANDOM_NUMBERS = "draws-random-numbers"
    #: A unit ``autocast`` test of a lower-precision dtype the vendor profile does not claim
    #: autocast in (vendor.yaml ``autocast``).
    UNCLAIMED_AUTOCAST = "unclaimed-autocast"
    #: A compile test of a vendor whose profile claims no ``torch.compile`` backend
    #: (vendor.yaml ``compile_backends``).
    UNCLAIMED_COMPILE_BACKEND = "unclaimed-compile-backend"
    #: A locked test whose sample the installed torch does not generate, on a run of a standard
    #: locked on another release (a canary): the test is not in this release.
    NOT_IN_RELEASE = "not-in-release"
    #: A distributed test of a vendor whose profile claims no process-group backend
    #: (vendor.yaml ``process_group_backend``).
    UNCLAIMED_PROCESS_GROUP = "unclaimed-process-group"
    #: A unit optimizer test of an optimizer the kit cannot judge against a float64 CPU
    #: reference (sparse gradients only, a step that branches on the loss's values, an update
    #: computed in bfloat16 by design: ``kit.tiers.unit.optim_ids.UNJUDGED``).
    OPTIMIZER_NOT_JUDGED = "optimizer-not-judged"
    #: A unit optimizer test whose config and implementation CPU refuses to construct on the
    #: standard's release (a Tensor ``lr`` with ``foreach``), decided at lock time.
    OPTIMIZER_CONFIG_REFUSED = "optimizer-config-refused"
    #: A unit error-parity test of an error input PyTorch's OpInfo gives for CPU alone (an index
    #: out of range, which CUDA refuses with an asynchronous device-side assert), on another
    #: device, decided at lock time (``kit.tiers.unit.locked_ids.CPU_ONLY_ERRORS``).
    CPU_ONLY_ERROR_INPUT = "cpu-only-error-input"
    #: A unit module test whose module CPU refuses to construct or run on its sample, in the
    #: tested dtype or in float64, on the standard's release (``kit.tiers.unit.module_ids``),
    #: decided at lock time: no reference to judge against.
    MODULE_REFUSED = "module-refused"


NA_REASON_KEY = "na_reason"

#: ``details`` key of where a unit test's device call ran its ops (``kit.attribution``).
DISPATCH_KEY = "dispatch"
#: ``details`` key of a model test's performance figures, measured by the worker after its
#: judged call (``kit.tiers.models.performance``): recorded, not graded.
PERFORMANCE_KEY = "performance"
#: ``details`` key of what a compile test's worker saw of each backend's compilation (graphs,
#: graph breaks, recompilations, a failure's stage: ``kit.tiers.compile.compiled``).
COMPILE_KEY = "compile"
#: ``details`` key of where a distributed test's collectives ran: the profile's
#: ``process_group_transport`` (``kit.vendors.profile.CollectiveTransport``), which the worker
#: ran under; ``host-copy`` is never counted as native on the device.
TRANSPORT_KEY = "transport"
#: ``details`` key of how a distributed test's ranks started: ``fork`` (from the worker) or
#: ``forkserver`` (from a fresh interpreter, where the device's runtime does not survive a
#: fork: ``kit.tiers.distributed.rank_start``).
RANK_START_KEY = "rank_start"
#: Details only the worker's process can know (a judge sees the evidence, not the call): the
#: orchestrator keeps them on the record the judge returns.
WORKER_DETAILS = (DISPATCH_KEY, PERFORMANCE_KEY, COMPILE_KEY, TRANSPORT_KEY, RANK_START_KEY)
#: Reasons that say a test has nothing to judge on any device, not that this vendor lacks
#: something: a required test NOT_APPLICABLE for one of them is no required test that did not
#: pass (``kit.grading.evidence``).
UNJUDGEABLE_REASONS = frozenset({NotApplicableReason.DRAWS_RANDOM_NUMBERS,
                                 NotApplicableReason.NOT_IN_RELEASE,
                                 NotApplicableReason.OPTIMIZER_NOT_JUDGED,
                                 NotApplicableReason.OPTIMIZER_CONFIG_REFUSED,
                                 # judged on CPU alone: PyTorch declares no refusal elsewhere
                                 NotApplicableReason.CPU_ONLY_ERROR_INPUT,
                                 NotApplicableReason.MODULE_REFUSED})
#: Reasons that say the vendor's profile does not offer a capability every standard leaves
#: optional: autocast in a lower-precision dtype (a device may autocast in bfloat16 only),
#: ``torch.compile`` and a process-group backend (an inference runtime may offer neither; one
#: that claims them has every such test required). A required test NOT_APPLICABLE for one of
#: them is no required test that did not pass either; what a standard requires is claimed by
#: every profile it certifies (float32, eager), so an unclaimed dtype or flow is never optional.
OPTIONAL_CAPABILITY_REASONS = frozenset({NotApplicableReason.UNCLAIMED_AUTOCAST,
                                         NotApplicableReason.UNCLAIMED_COMPILE_BACKEND,
                                         NotApplicableReason.UNCLAIMED_PROCESS_GROUP})
#: ``details`` key of a canary's test whose inputs in the installed release are not those the
#: standard locked (``kit.tiers.unit.release_drift``): its verdict is on other inputs.
INPUTS_CHANGED_KEY = "inputs_changed"


@dataclass(frozen=True)
class TestRecord:
    """One finished test, as journaled and reported.

    ``details`` holds status-specific facts: for FAIL_NUMERIC ``max_abs_err``, ``max_rel_err``,
    ``mismatched``, ``numel``, ``atol``, ``rtol``; for FAIL_SEMANTIC ``failure`` (what differs);
    for CRASH ``signal``/``exit_code``; for SKIPPED the manifest entry (``reason``,
    ``tracking``, ``expires``, ``pattern``); for NOT_APPLICABLE ``na_reason`` (a
    ``NotApplicableReason``) and ``reason`` (the words).
    """

    __test__ = False  # not a pytest test class

    id: str
    status: Status
    duration_s: float = 0.0
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def tier(self) -> str:
        return tier_of(self.id)

    def to_json(self) -> dict[str, Any]:
        # Not ``asdict``: it checks every value of the details for a dataclass on the way down,
        # the orchestrator's largest cost per test.
        return {"id": self.id, "status": self.status.value, "duration_s": self.duration_s,
                "message": self.message, "details": _copied(self.details), "tier": self.tier}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TestRecord:
        return cls(
            id=data["id"],
            status=Status(data["status"]),
            duration_s=float(data.get("duration_s", 0.0)),
            message=data.get("message", ""),
            details=dict(data.get("details", {})),
        )

    def to_record(self) -> TestRecord:
        return self


class RecordFields(Protocol):
    """What grading and the summaries read of a record: a ``TestRecord``, or a body's record as
    decoded (``kit.report.body.BodyRecord``), read without a typed copy of a whole run."""

    @property
    def id(self) -> str: ...
    @property
    def status(self) -> Status: ...
    @property
    def duration_s(self) -> float: ...
    @property
    def message(self) -> str: ...
    @property
    def details(self) -> dict[str, Any]: ...
    @property
    def tier(self) -> str: ...

    def to_record(self) -> TestRecord:
        """The record as a ``TestRecord`` (itself, for one)."""
        ...


#: The longest message a record keeps (a first line of an exception, a skip's reason).
RECORD_MESSAGE_LIMIT = 2000


@dataclass(frozen=True)
class Verdict:
    """How a test was decided, where it was decided (a pytest phase, the kit's judge);
    ``record`` is the one place a verdict becomes a ``TestRecord``."""

    status: Status
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def record(self, test_id: str, duration: float) -> TestRecord:
        return TestRecord(
            test_id, self.status, round(duration, 6), self.message[:RECORD_MESSAGE_LIMIT],
            dict(self.details),
        )


def _copied(value: Any) -> Any:
    """A copy of a record's details, as ``dataclasses.asdict`` makes it: containers copied,
    a dataclass made a dict, anything else deep-copied (plain values are returned as they are)."""
    kind = type(value)
    if kind in (str, int, float, bool, type(None)):
        return value
    if kind is dict:
        return {key: _copied(item) for key, item in value.items()}
    if kind is list:
        return [_copied(item) for item in value]
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if kind is tuple:
        return tuple(_copied(item) for item in value)
    return copy.deepcopy(value)
