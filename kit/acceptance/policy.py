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
from kit.acceptance.kit_checks import (
    ReleasedKitCheck,
    StandardCheck,
    StandardsByReleaseCheck,
    TorchReleaseCheck,
)
from kit.acceptance.result_checks import (
    MaxAgeCheck,
    MinGradeCheck,
    SkipPolicyCheck,
    VendorCheck,
    grade_order,
)
from kit.config_reader import Node, Section
from kit.errors import InputError
from kit.grading.released import ReleasedKit, load_released_kits
from kit.report.model import Report
from kit.verification.content import KitStanding


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
    """What a policy file's values are read against."""

    fields: Section
    vendor: str | None
    released_kits: tuple[ReleasedKit, ...]
    #: Where ``released_kits`` came from, as the checks name it.
    released_source: str | None


def _built(node: Node, make: Callable[..., AcceptanceCheck], *args: Any) -> AcceptanceCheck:
    """``make(*args)``; a check refusing its value is refused naming the file and ``node``'s
    key."""
    try:
        return make(*args)
    except InputError as exc:
        raise node.error(str(exc)) from None


def _text(node: Node) -> str:
    return node.text(expected="a quoted string")


def _released_kit(ctx: _Context, node: Node) -> AcceptanceCheck | None:
    if not node.flag():
        return None
    if ctx.released_source is None:
        return ReleasedKitCheck(ctx.released_kits)
    return ReleasedKitCheck(ctx.released_kits, ctx.released_source)


def _standard(ctx: _Context, node: Node) -> AcceptanceCheck | None:
    return _built(node, StandardCheck, _text(node))


def _torch_release(ctx: _Context, node: Node) -> AcceptanceCheck | None:
    return _built(node, TorchReleaseCheck, _text(node))


def _standards(ctx: _Context, node: Node) -> AcceptanceCheck | None:
    for alone in ("standard", "torch_release"):
        if ctx.fields.get(alone) is not None:
            raise node.error(f"standards lists each release's standard: drop {alone}")
    pairs = tuple((release, _text(value))
                  for release, value in node.entries(non_empty=True, what="a mapping of torch "
                                                     "release to standard, such as '2.13': v2"))
    return _built(node, StandardsByReleaseCheck, pairs)


def _vendor(ctx: _Context, node: Node) -> AcceptanceCheck | None:
    return _built(node, VendorCheck, _text(node))


def _vendor_is_submission_path(ctx: _Context, node: Node) -> AcceptanceCheck | None:
    if not node.flag():
        return None
    if ctx.vendor is None:
        raise node.error("needs the vendor of the submission path (ckit verify --vendor)")
    return VendorCheck(ctx.vendor)


def _min_grade(ctx: _Context, node: Node) -> AcceptanceCheck | None:
    # Grades are the policy's standard's, when it names one (the last of standards); else the
    # kit's current one's.
    version = ctx.fields.optional("standard", None, _text)
    listed = ctx.fields.get("standards")
    if version is None and listed is not None:
        version = _text(listed.entries(non_empty=True)[-1][1])
    return _built(node, MinGradeCheck, _text(node), grade_order(version))


def _max_age_days(ctx: _Context, node: Node) -> AcceptanceCheck | None:
    return MaxAgeCheck(node.integer(minimum=0, what="a whole number of days"))


def _skip_policy_clean(ctx: _Context, node: Node) -> AcceptanceCheck | None:
    return SkipPolicyCheck() if node.flag() else None


Reader = Callable[[_Context, Node], AcceptanceCheck | None]
#: The vocabulary of a policy file, in the order its checks run.
KEYS: dict[str, Reader] = {
    "released_kit": _released_kit,
    "standard": _standard,
    "torch_release": _torch_release,
    "standards": _standards,
    "vendor": _vendor,
    "vendor_is_submission_path": _vendor_is_submission_path,
    "min_grade": _min_grade,
    "max_age_days": _max_age_days,
    "skip_policy_clean": _skip_policy_clean,
}


def load_policy(
    path: Path,
    *,
    vendor: str | None = None,
    released_kits: Sequence[ReleasedKit] | None = None,
    released_source: Path | None = None,
) -> AcceptancePolicy:
    """The policy in ``path``; ``InputError`` with one line if it is not one.

    ``vendor`` is the vendor of the submission path, for ``vendor_is_submission_path``;
    ``released_kits`` the list ``released_kit`` judges against (default: the kit home's), read
    from ``released_source`` (default: the kit's own list, as its lines name it).
    """
    fields = Node.read(path).section(optional=KEYS, what="a mapping of acceptance conditions")
    kits = load_released_kits() if released_kits is None else tuple(released_kits)
    source = None if released_source is None else str(released_source)
    ctx = _Context(fields, vendor, kits, source)
    checks = tuple(
        check
        for key, read in KEYS.items()
        if (node := fields.get(key)) is not None
        if (check := read(ctx, node)) is not None
    )
    try:
        return AcceptancePolicy(checks)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
