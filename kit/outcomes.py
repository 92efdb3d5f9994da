"""Exceptions a tier test raises to report a status other than PASS/ERROR.

In plain pytest they read as ordinary failures or skips; the kit plugin turns them into
``Status`` values with details.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NoReturn, Protocol, TypeVar

# pytest's outcome types themselves (pytest.skip.Exception, pytest.xfail.Exception), not the
# pytest package: the judge and the orchestrator read outcomes without running pytest (importing
# the package is about 0.1 s of CPU in each).
from _pytest.outcomes import Skipped, XFailed

from kit.results import NA_REASON_KEY, NotApplicableReason, Status, Verdict


class Measurement(Protocol):
    """What an outcome reads of a compared tensor's figures (``kit.numerics.comparison`` has
    them): declared here, so that outcomes import nothing of the numerics they report."""

    @property
    def where(self) -> str: ...
    @property
    def numel(self) -> int: ...
    @property
    def mismatched(self) -> int: ...
    @property
    def ratio(self) -> float: ...
    @property
    def max_abs_err(self) -> float: ...
    @property
    def max_rel_err(self) -> float: ...
    @property
    def max_ulps(self) -> float: ...
    @property
    def dtype(self) -> str: ...
    @property
    def bound(self) -> Mapping[str, Any]: ...

    def to_json(self) -> dict[str, Any]: ...


Measured = TypeVar("Measured", bound=Measurement)
#: No notes: what a test that noted nothing leaves.
EMPTY: Mapping[str, Any] = MappingProxyType({})


class KitOutcome(Exception):
    status: Status = Status.ERROR

    def details(self) -> dict[str, Any]:
        return {}


class NumericMismatch(KitOutcome, AssertionError):
    """Values outside the standard's bound; carries every measurement of the result."""

    status = Status.FAIL_NUMERIC

    def __init__(self, worst: Measurement, measurements: Sequence[Measurement]) -> None:
        self.worst = worst
        self.measurements = tuple(measurements)
        location = f" in {worst.where}" if worst.where else ""
        super().__init__(
            f"{worst.mismatched}/{worst.numel} elements outside the bound{location}: "
            f"max abs err {worst.max_abs_err:.3g}, max rel err {worst.max_rel_err:.3g}, "
            f"{worst.max_ulps:.3g} ulps of {worst.dtype}, {worst.ratio:.3g}x the bound "
            f"({_bound_words(worst.bound)})"
        )

    @property
    def max_abs_err(self) -> float:
        return self.worst.max_abs_err

    @property
    def max_rel_err(self) -> float:
        return self.worst.max_rel_err

    @property
    def numel(self) -> int:
        return self.worst.numel

    def details(self) -> dict[str, Any]:
        return numerics_details(self.measurements)


def numerics_details(measurements: Sequence[Measurement]) -> dict[str, Any]:
    """The figures a record keeps, pass or fail: the worst output's, flat, plus each output's."""
    worst = worst_of(measurements)
    if worst is None:
        return {}
    details: dict[str, Any] = worst.to_json()
    if len(measurements) > 1:
        details["outputs"] = [m.to_json() for m in measurements]
    return details


def _bound_words(bound: Mapping[str, Any]) -> str:
    return ", ".join(f"{key} {value}" for key, value in bound.items())


#: ``details.failure`` of a result whose structure differs (a tensor where CPU gives a tuple, a
#: sequence of another length, a missing output).
WRONG_STRUCTURE = "wrong-structure"


class ResultMismatch(KitOutcome, AssertionError):
    """The result has the wrong structure, shape, dtype or device: wrong, but not by a number,
    so FAIL_SEMANTIC (checked before the values; a standard that predates the status records
    FAIL_NUMERIC). ``failure`` names what differs (``details.failure``: ``wrong-shape``...)."""

    status = Status.FAIL_SEMANTIC

    def __init__(self, message: str, *, failure: str = WRONG_STRUCTURE, **facts: Any) -> None:
        self.facts = {"failure": failure, **facts}
        super().__init__(message)

    def details(self) -> dict[str, Any]:
        return dict(self.facts)


class SemanticMismatch(ResultMismatch):
    """The call behaved unlike CPU in something its values cannot show: a result dtype, shape
    or layout, a view that is a copy, an ``out=`` tensor not written, a stale repeat, a missing
    error. ``failure`` names which (``details.failure``: ``not-a-view``, ``wrong-strides``...).
    """

    def __init__(self, message: str, *, failure: str, **facts: Any) -> None:
        super().__init__(message, failure=failure, **facts)  # here the code is required


class ValuesNotCompared(KitOutcome, AssertionError):
    """NOT_APPLICABLE, decided by the kit's judge once the device has run: the result's values
    cannot be compared with CPU's, for one of the kit's reasons (random draws)."""

    status = Status.NOT_APPLICABLE

    def __init__(self, code: NotApplicableReason, reason: str) -> None:
        self.code = NotApplicableReason(code)
        self.reason = reason
        super().__init__(f"{NOT_APPLICABLE_PREFIX}{reason}")

    def details(self) -> dict[str, Any]:
        return {NA_REASON_KEY: self.code.value, "reason": self.reason}


class Unsupported(KitOutcome):
    """The device does not implement what the test needs."""

    status = Status.UNSUPPORTED


#: How a test that ends not applicable while it runs (plain pytest) says so: the words follow.
NOT_APPLICABLE_PREFIX = "not applicable: "


@dataclass(frozen=True)
class Inapplicable:
    """The kit's decision that a test does not apply, for one of its reasons: a typed value,
    whether ``ckit run`` decides it before dispatch or a test ends so while it runs."""

    reason: NotApplicableReason
    #: The reason in words, for the record's message.
    words: str

    def verdict(self) -> Verdict:
        """The verdict of a test that ends so while it runs."""
        return Verdict(Status.NOT_APPLICABLE, f"{NOT_APPLICABLE_PREFIX}{self.words}",
                       {NA_REASON_KEY: self.reason.value, "reason": self.words})


@dataclass(frozen=True)
class ManifestSkip:
    """A test an entry of the vendor's skip manifest skips (``words``: the entry described)."""

    words: str

    def verdict(self) -> Verdict:
        return Verdict(Status.SKIPPED, self.words, {"reason": self.words})


@dataclass(frozen=True)
class DeviceUnusable:
    """A test that needs a device the kit could not enable: no kit reason code, so the report
    counts it against the grade."""

    problem: str

    def verdict(self) -> Verdict:
        return Verdict(Status.NOT_APPLICABLE, self.problem, {"reason": self.problem})


#: What the kit decides of a test instead of running it, as a typed value.
KitDecision = Inapplicable | ManifestSkip | DeviceUnusable


class KitSkip(Skipped):
    """pytest's skip carrying the kit's decision: plain pytest shows it as any skip, and the
    plugin reads the decision by type, never from the skip's words."""

    # pytest prints a skip as ``<module>.<name>: reason``, leaving out the module where it is
    # ``builtins`` and the name where it is ``Skipped``: shown exactly as its own skips.
    __module__ = "builtins"
    __qualname__ = "Skipped"

    def __init__(self, decision: KitDecision, *, at_item: bool = False) -> None:
        # ``at_item``: a skip the plugin raises before the test runs is reported at the test's
        # location, as pytest reports a skip marker's (``_use_item_location``).
        super().__init__(decision.verdict().message, _use_item_location=at_item)
        self.decision = decision


def not_applicable(code: NotApplicableReason, reason: str) -> NoReturn:
    """End the test as NOT_APPLICABLE for one of the kit's reasons (a ``KitSkip``)."""
    raise KitSkip(Inapplicable(NotApplicableReason(code), reason))


def na_reason_of(exc: BaseException) -> NotApplicableReason | None:
    """The kit's reason code a skip carries; None for any other skip (vendor code's own)."""
    if isinstance(exc, KitSkip) and isinstance(exc.decision, Inapplicable):
        return exc.decision.reason
    return None


#: Messages that mean "this op is not implemented on this device" rather than a bug.
UNSUPPORTED_MARKERS = (
    "not implemented for",
    "could not run",
    "is not currently implemented",
    "not currently supported",
    "no kernel",
)


def classify_exception(exc: BaseException) -> Status:
    if isinstance(exc, KitOutcome):
        return exc.status
    if isinstance(exc, NotImplementedError):
        return Status.UNSUPPORTED
    text = str(exc).lower()
    if isinstance(exc, RuntimeError) and any(marker in text for marker in UNSUPPORTED_MARKERS):
        return Status.UNSUPPORTED
    return Status.ERROR


def verdict_of(raised: BaseException | None, notes: Mapping[str, Any] = EMPTY) -> Verdict:
    """How a test ended, wherever it ran (a pytest phase, the worker's direct call, the judge):
    PASS with what it ``notes`` when nothing was ``raised``; the kit's decision a ``KitSkip``
    carries; any other skip NOT_APPLICABLE without a kit reason (the report counts it against
    the grade); else the status the exception maps to, a failure keeping what the test noted
    before it failed (where its device call ran its ops) under the exception's details."""
    if raised is None:
        return Verdict(Status.PASS, "", dict(notes))
    if isinstance(raised, KitSkip):
        return raised.decision.verdict()
    if isinstance(raised, (Skipped, XFailed)):
        reason = str(raised)
        return Verdict(Status.NOT_APPLICABLE, reason, {"reason": reason})
    status = classify_exception(raised)
    details = raised.details() if isinstance(raised, KitOutcome) else {}
    if status.is_failure:
        details = {**notes, **details}
    return Verdict(status, failure_message(raised), details)


def failure_message(exc: BaseException) -> str:
    """A record's message of an exception: its type and first line."""
    first_line = (str(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {first_line}"


def worst_of(measurements: Sequence[Measured]) -> Measured | None:
    """The measurement that decides: any with mismatches first, then the largest error ratio."""
    if not measurements:
        return None
    return max(measurements, key=lambda m: (m.mismatched > 0, _sortable(m.ratio)))


def _sortable(value: float) -> float:
    return math.inf if math.isnan(value) else value
