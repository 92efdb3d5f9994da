"""An acceptance policy: checks that must all be met, and the YAML file that names them.

A policy is all-of, said once here: a report is accepted when every check is met. There is no
any-of and no empty policy; a policy without checks is refused rather than read as "accept
every report". A policy file holds a mapping of a fixed vocabulary (``KEYS``); any other key is
an error, so a misspelt condition never silently drops out.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit.acceptance.interface import AcceptanceCheck
from kit.acceptance.kit_checks import ReleasedKitCheck, StandardCheck, TorchReleaseCheck
from kit.acceptance.result_checks import (
    MaxAgeCheck,
    MinGradeCheck,
    SkipPolicyCheck,
    VendorCheck,
    grade_order,
)
from kit.errors import InputError
from kit.grading.released import ReleasedKit, load_released_kits
from kit.report.model import Report
from kit.verification.content import KitStanding
from kit.yamlio import load_yaml


@dataclass(frozen=True)
class PolicyOutcome:
    name: str
    passed: bool
    #: What the check asks (its ``describe()``).
    description: str
    #: Why the check was not met, one line; None when it was.
    why: str | None


@dataclass(frozen=True)
class AcceptancePolicy:
    """All of ``checks`` must be met; at least one check, never "accept everything"."""

    checks: tuple[AcceptanceCheck, ...]

    def __post_init__(self) -> None:
        if not self.checks:
            raise InputError(
                "an acceptance policy needs at least one check: an empty one would accept "
                "every report"
            )

    def evaluate(
        self, report: Report, standing: KitStanding, now: dt.datetime
    ) -> tuple[PolicyOutcome, ...]:
        """Every check's outcome, in the policy's order (all are run, so all are reported)."""
        return tuple(_outcome(check, report, standing, now) for check in self.checks)

    def with_checks(self, checks: Iterable[AcceptanceCheck]) -> AcceptancePolicy:
        """This policy and ``checks`` too, each distinct check once."""
        combined: list[AcceptanceCheck] = []
        for check in (*self.checks, *checks):
            if check not in combined:
                combined.append(check)
        return AcceptancePolicy(tuple(combined))


def _outcome(
    check: AcceptanceCheck, report: Report, standing: KitStanding, now: dt.datetime
) -> PolicyOutcome:
    why = check.check(report, standing, now)
    return PolicyOutcome(check.name, why is None, check.describe(), why)


def accepted(outcomes: Sequence[PolicyOutcome]) -> bool:
    """All-of: accepted when every outcome passed."""
    return all(outcome.passed for outcome in outcomes)


@dataclass(frozen=True)
class _Context:
    """What a policy file's values are read against; a reader's ``InputError`` says what is
    wrong with its key's value, and ``_check`` names the file and the key."""

    path: Path
    data: dict[str, Any]
    vendor: str | None
    released_kits: tuple[ReleasedKit, ...]

    def text(self, key: str) -> str:
        value = self.data[key]
        if not isinstance(value, str) or not value:
            raise InputError(f"expected a quoted string, got {value!r}")
        return value

    def flag(self, key: str) -> bool:
        value = self.data[key]
        if not isinstance(value, bool):
            raise InputError(f"expected true or false, got {value!r}")
        return value


def _released_kit(ctx: _Context, key: str) -> AcceptanceCheck | None:
    return ReleasedKitCheck(ctx.released_kits) if ctx.flag(key) else None


def _standard(ctx: _Context, key: str) -> AcceptanceCheck | None:
    return StandardCheck(ctx.text(key))


def _torch_release(ctx: _Context, key: str) -> AcceptanceCheck | None:
    return TorchReleaseCheck(ctx.text(key))


def _vendor(ctx: _Context, key: str) -> AcceptanceCheck | None:
    return VendorCheck(ctx.text(key))


def _vendor_is_submission_path(ctx: _Context, key: str) -> AcceptanceCheck | None:
    if not ctx.flag(key):
        return None
    if ctx.vendor is None:
        raise InputError("needs the vendor of the submission path (ckit verify --vendor)")
    return VendorCheck(ctx.vendor)


def _min_grade(ctx: _Context, key: str) -> AcceptanceCheck | None:
    # Grades are the policy's standard's, when it names one; else the kit's current one's.
    version = ctx.text("standard") if "standard" in ctx.data else None
    return MinGradeCheck(ctx.text(key), grade_order(version))


def _max_age_days(ctx: _Context, key: str) -> AcceptanceCheck | None:
    value = ctx.data[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"expected a whole number of days, got {value!r}")
    return MaxAgeCheck(value)


def _skip_policy_clean(ctx: _Context, key: str) -> AcceptanceCheck | None:
    return SkipPolicyCheck() if ctx.flag(key) else None


Reader = Callable[[_Context, str], AcceptanceCheck | None]
#: The vocabulary of a policy file, in the order its checks run.
KEYS: dict[str, Reader] = {
    "released_kit": _released_kit,
    "standard": _standard,
    "torch_release": _torch_release,
    "vendor": _vendor,
    "vendor_is_submission_path": _vendor_is_submission_path,
    "min_grade": _min_grade,
    "max_age_days": _max_age_days,
    "skip_policy_clean": _skip_policy_clean,
}


def _check(ctx: _Context, key: str) -> AcceptanceCheck | None:
    try:
        return KEYS[key](ctx, key)
    except InputError as exc:
        raise InputError(f"{ctx.path}: {key}: {exc}") from None


def load_policy(
    path: Path,
    *,
    vendor: str | None = None,
    released_kits: Sequence[ReleasedKit] | None = None,
) -> AcceptancePolicy:
    """The policy in ``path``; ``InputError`` with one line if it is not one.

    ``vendor`` is the vendor of the submission path, for ``vendor_is_submission_path``;
    ``released_kits`` the list ``released_kit`` judges against (default: the kit home's).
    """
    data = load_yaml(path)
    if not isinstance(data, dict) or not data:
        raise InputError(f"{path}: expected a mapping of acceptance conditions ({', '.join(KEYS)})")
    unknown = [str(key) for key in data if key not in KEYS]
    if unknown:
        raise InputError(
            f"{path}: unknown key {unknown[0]!r}; the keys are {', '.join(KEYS)}"
        )
    kits = load_released_kits() if released_kits is None else tuple(released_kits)
    ctx = _Context(path, data, vendor, kits)
    checks = tuple(check for key in KEYS if key in data if (check := _check(ctx, key)) is not None)
    try:
        return AcceptancePolicy(checks)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
