"""Judging a result by a criterion (``kit.numerics.criteria``): its figures and its verdict.

A ``Judgement`` keeps a ``Measurement`` of every compared tensor, passing or not, and for an
SQNR floor the signal-to-noise ratio it measured; ``failure`` is the outcome a failing result
ends its test with, ``problem`` its one line. ``assert_close`` is the judge of a test: it raises
that outcome, or returns the measurements.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from kit.numerics.comparison import Bound, Measurement, measure, paired_tensors, signal_to_noise
from kit.outcomes import KitOutcome, NumericMismatch, worst_of
from kit.results import Status


class SignalBelowFloor(KitOutcome, AssertionError):
    """Outputs whose signal-to-noise ratio is below the criterion's floor."""

    status = Status.FAIL_NUMERIC


@dataclass(frozen=True)
class Judgement:
    """A criterion's verdict on one result, with the figures it was reached on."""

    #: One per compared tensor, in the result's order.
    measurements: tuple[Measurement, ...]
    #: The signal-to-noise ratio an SQNR floor measured (dB); None for the other kinds.
    sqnr_db: float | None = None
    #: Why the result fails a condition on all its elements at once (the SQNR floor).
    shortfall: str | None = None

    @property
    def failure(self) -> KitOutcome | None:
        """The outcome of a failing result (an element outside its bound first); None when
        the result passes."""
        worst = worst_of(self.measurements)
        if worst is not None and worst.mismatched:
            return NumericMismatch(worst, self.measurements)
        return SignalBelowFloor(self.shortfall) if self.shortfall is not None else None

    @property
    def problem(self) -> str | None:
        """Why the result fails, in one line; None when it passes."""
        failure = self.failure
        return None if failure is None else str(failure)

    @property
    def passed(self) -> bool:
        return self.failure is None

    def raise_if_failed(self) -> None:
        failure = self.failure
        if failure is not None:
            raise failure


class Judges(Protocol):
    """What ``assert_close`` asks of a criterion (``kit.numerics.criteria`` has them): declared
    here, so that judging imports nothing of the criteria that call it."""

    def judge(self, actual: Any, expected: Any, where: str = "output") -> Judgement: ...


class Floor(Bound, Protocol):
    """A bound with a signal-to-noise floor (``kit.numerics.criteria.SqnrFloor``)."""

    @property
    def db(self) -> float: ...


def judge_elementwise(criterion: Bound, actual: Any, expected: Any, where: str) -> Judgement:
    """Every tensor of ``actual`` against ``expected`` under the criterion's bound."""
    pairs = paired_tensors(actual, expected, where)
    return Judgement(tuple(measure(a, e, criterion, at) for at, a, e in pairs))


def judge_signal_to_noise(floor: Floor, actual: Any, expected: Any, where: str) -> Judgement:
    """Every tensor measured (integers exact, NaN and infinities where the reference has them),
    then the signal-to-noise ratio of the floating ones against the floor."""
    pairs = list(paired_tensors(actual, expected, where))
    measurements = tuple(measure(a, e, floor, at) for at, a, e in pairs)
    measured = signal_to_noise([(a, e) for _, a, e in pairs if e.is_floating_point()])
    if measured >= floor.db:
        return Judgement(measurements, measured)
    shortfall = f"outputs are {measured:.1f} dB above their error, below the floor of {floor.db} dB"
    return Judgement(measurements, measured, shortfall)


def assert_close(
    actual: Any, expected: Any, criterion: Judges, where: str = "output"
) -> list[Measurement]:
    """Raise the failure (``NumericMismatch``, ...; ``ResultMismatch`` for a structure that
    differs) unless ``actual`` meets ``criterion`` against ``expected``.

    ``expected`` may be in a wider dtype (a float64 reference); dtype checks are the caller's
    job (``assert_same_dtype``). Returns the measurements when the result passes.
    """
    judgement = criterion.judge(actual, expected, where)
    judgement.raise_if_failed()
    return list(judgement.measurements)

