"""The result data model shared by the runner, the report formats and the verifier."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any


class Status(enum.StrEnum):
    PASS = "PASS"
    #: Ran, but the values differ from the reference beyond the standard's tolerance.
    FAIL_NUMERIC = "FAIL_NUMERIC"
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
    #: Does not apply to this vendor or environment (unclaimed dtype, optional source absent).
    NOT_APPLICABLE = "NOT_APPLICABLE"

    @property
    def is_failure(self) -> bool:
        return self in FAILURE_STATUSES


FAILURE_STATUSES = frozenset(
    {Status.FAIL_NUMERIC, Status.ERROR, Status.UNSUPPORTED, Status.CRASH, Status.TIMEOUT}
)

TIERS = ("deploy", "unit", "models")


def tier_of(test_id: str) -> str:
    """Stable test ids start with their tier: ``unit/opinfo/add/float32/0`` -> ``unit``."""
    return test_id.split("/", 1)[0]


@dataclass(frozen=True)
class TestRecord:
    """One finished test, as journaled and reported.

    ``details`` holds status-specific facts: for FAIL_NUMERIC ``max_abs_err``, ``max_rel_err``,
    ``mismatched``, ``numel``, ``atol``, ``rtol``; for CRASH ``signal``/``exit_code``; for
    SKIPPED the manifest entry (``reason``, ``tracking``, ``expires``, ``pattern``).
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
        data = asdict(self)
        data["status"] = self.status.value
        data["tier"] = self.tier
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TestRecord:
        return cls(
            id=data["id"],
            status=Status(data["status"]),
            duration_s=float(data.get("duration_s", 0.0)),
            message=data.get("message", ""),
            details=dict(data.get("details", {})),
        )
