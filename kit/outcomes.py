"""Exceptions a tier test raises to report a status other than PASS/ERROR.

In plain pytest they read as ordinary failures or skips; the kit plugin turns them into
``Status`` values with details.
"""

from __future__ import annotations

from typing import Any

import pytest

from kit.results import Status


class KitOutcome(Exception):
    status: Status = Status.ERROR

    def details(self) -> dict[str, Any]:
        return {}


class NumericMismatch(KitOutcome, AssertionError):
    status = Status.FAIL_NUMERIC

    def __init__(
        self,
        *,
        max_abs_err: float,
        max_rel_err: float,
        mismatched: int,
        numel: int,
        atol: float,
        rtol: float,
        where: str = "",
    ) -> None:
        self.max_abs_err = max_abs_err
        self.max_rel_err = max_rel_err
        self.mismatched = mismatched
        self.numel = numel
        self.atol = atol
        self.rtol = rtol
        self.where = where
        location = f" in {where}" if where else ""
        super().__init__(
            f"{mismatched}/{numel} elements differ{location}: max abs err {max_abs_err:.3g}, "
            f"max rel err {max_rel_err:.3g} (atol {atol:g}, rtol {rtol:g})"
        )

    def details(self) -> dict[str, Any]:
        return {
            "max_abs_err": self.max_abs_err,
            "max_rel_err": self.max_rel_err,
            "mismatched": self.mismatched,
            "numel": self.numel,
            "atol": self.atol,
            "rtol": self.rtol,
        }


class ResultMismatch(KitOutcome, AssertionError):
    """The result has the wrong structure, shape, dtype or device: wrong, but not by a number."""

    status = Status.FAIL_NUMERIC

    def __init__(self, message: str, **facts: Any) -> None:
        self.facts = facts
        super().__init__(message)

    def details(self) -> dict[str, Any]:
        return dict(self.facts)


class Unsupported(KitOutcome):
    """The device does not implement what the test needs."""

    status = Status.UNSUPPORTED


def not_applicable(reason: str) -> None:
    """End the test as NOT_APPLICABLE (a pytest skip whose reason carries the marker)."""
    pytest.skip(f"{NOT_APPLICABLE_PREFIX}{reason}")


NOT_APPLICABLE_PREFIX = "not applicable: "

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
