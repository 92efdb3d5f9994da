"""The release gate: which vendors' audited results meet a release's bar.

A policy (the standard's ``gate.yaml`` or the release manager's own file) sets per-tier minimum pass
rates, a minimum grade, the vendors that must pass, and how long a failing vendor has to fix it.
Only submissions whose audit passed count; for each vendor the latest of them (newest run finish,
any kit version) is judged. A vendor whose latest result falls short is "fixing" for
``max_failing_age_hours`` from the run finish of its first failing result since its last passing
one, then "failed". The gate is open when every required vendor passes, no vendor is past the
window, and the repository's own checks passed.

Each failing test of a vendor's latest result carries its own clock (``failing_tests.py``): when
its unbroken streak of failures began and whether that is past the same window. The gate shows
them; with ``close_on_test_breach`` (``ckit gate --max-age-hours N``) a required vendor with any
test past the window closes it.

It fails closed: with nothing to judge (a release no carried standard certifies, a repository
without submissions, none for the release, a policy that requires no vendor) it is closed, each
reason said (``GateResult.closures``), whatever the vendors' verdicts.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from kit.config_reader import Node
from kit.paths import VENDOR_ID
from kit.report.core_aten import CoreAtenJson
from kit.report.model import Report
from kit.report.training_summary import passed_words, training_steps_of
from kit.repository.failing_tests import FailingTest, FailingTestJson, breaches, failing_tests
from kit.repository.interface import (
    CheckResult,
    CheckResultJson,
    RepositoryAudit,
    SubmissionAudit,
    SubmissionAuditJson,
)
from kit.repository.layout import torch_release_of
from kit.standard import load_standard
from kit.standard.catalogue import carried_versions
from kit.tiers.registry import tier_names
from kit.yamlio import load_yaml

GATE_POLICY_NAME = "gate.yaml"
#: The policy file's vocabulary: any other key is refused, so a typo never loosens the gate.
POLICY_KEYS = ("min_pass_rate", "min_grade", "required_vendors", "max_failing_age_hours")


def default_policy_path(release: str | None = None) -> Path:
    """The ``gate.yaml`` (its own or inherited) of the newest carried standard certifying
    ``release`` (``2.14``), else of the kit's current standard."""
    certifying = [v for v in carried_versions()
                  if torch_release_of(load_standard(v).torch_release) == release]
    return load_standard(certifying[-1] if certifying else None).file(GATE_POLICY_NAME)


class GatePolicyJson(TypedDict):
    min_pass_rate: dict[str, float]
    min_grade: str
    required_vendors: list[str]
    max_failing_age_hours: float
    close_on_test_breach: bool


@dataclass(frozen=True)
class GatePolicy:
    #: Per tier, the least passed / (ran + missing) the latest result may show.
    min_pass_rate: Mapping[str, float]
    min_grade: str
    #: ``min_grade`` and every better grade of the standard, best first.
    accepted_grades: tuple[str, ...]
    required_vendors: tuple[str, ...]
    max_failing_age_hours: float
    #: A required vendor with a test failing past the window closes the gate (never read from
    #: the policy file: ``ckit gate --max-age-hours`` sets it).
    close_on_test_breach: bool = False

    def to_json(self) -> GatePolicyJson:
        return {
            "min_pass_rate": dict(self.min_pass_rate),
            "min_grade": self.min_grade,
            "required_vendors": list(self.required_vendors),
            "max_failing_age_hours": self.max_failing_age_hours,
            "close_on_test_breach": self.close_on_test_breach,
        }


def _min_pass_rate(node: Node) -> dict[str, float]:
    names = tier_names()
    tiers = node.section(optional=names, what="a mapping of tiers to numbers from 0 to 1")
    rates = {tier: tiers[tier].number(minimum=0, maximum=1) for tier in tiers.keys()}
    return {tier: rates[tier] for tier in names if tier in rates}


def parse_gate_policy(data: Any, path: Path) -> GatePolicy:
    """The policy in ``data`` (a parsed YAML document); ``InputError`` naming ``path`` if not."""
    fields = Node.of(data, path).section(
        POLICY_KEYS, what="a gate policy: a mapping of " + ", ".join(POLICY_KEYS)
    )
    grades = [grade.name for grade in load_standard().grades]  # best first
    min_grade = fields["min_grade"].choice(grades)
    vendors = fields["required_vendors"].strings(
        pattern=VENDOR_ID, expected="a vendor id", unique=True
    )
    return GatePolicy(
        min_pass_rate=_min_pass_rate(fields["min_pass_rate"]),
        min_grade=min_grade,
        accepted_grades=tuple(grades[: grades.index(min_grade) + 1]),
        required_vendors=tuple(sorted(vendors)),
        max_failing_age_hours=fields["max_failing_age_hours"].number(
            minimum=0, what="a number of hours"
        ),
    )


def load_gate_policy(path: Path | None = None, release: str | None = None) -> GatePolicy:
    """The policy at ``path`` (default: the ``gate.yaml`` of ``release``'s standard)."""
    path = path or default_policy_path(release)
    return parse_gate_policy(load_yaml(path), path)


def with_test_window(policy: GatePolicy, hours: float) -> GatePolicy:
    """``policy`` with a window of ``hours`` (the vendor's and each test's), closing the gate on
    any required vendor's test failing past it."""
    return dataclasses.replace(policy, max_failing_age_hours=hours, close_on_test_breach=True)


def percent(rate: float) -> str:
    """``rate`` as a percentage, rounded down: 10640 of 10641 is 99.99%, never 100.00%."""
    return f"{math.floor(rate * 10_000) / 100:.2f}%"


def tier_pass_rates(report: Report) -> dict[str, float | None]:
    """Per tier of the report: passed / (ran + locked tests without a record); None if nothing
    ran. A missing test counts as a failure, as the grade counts it."""
    return {tier: counts.rate_counting_missing() for tier, counts in report.summary.tiers.items()}


def _core_aten_json(report: Report | None) -> CoreAtenJson | None:
    coverage = report.summary.core_aten(report.standard.torch_release) if report else None
    return None if coverage is None else coverage.to_json()


def training_words(report: Report) -> str | None:
    """How many of the report's model training steps passed (``11 of 12 passed``); None for a
    report without them (a standard before v2, a run narrowed to other tests)."""
    steps = training_steps_of(report.records)
    return passed_words(steps) if steps else None


def shortfalls(report: Report, policy: GatePolicy) -> list[str]:
    """Why ``report`` falls short of ``policy``, one phrase each; empty when it meets the bar."""
    problems = []
    if report.grade.name not in policy.accepted_grades:
        problems.append(f"grade {report.grade.name} is below {policy.min_grade}")
    rates = tier_pass_rates(report)
    for tier, minimum in policy.min_pass_rate.items():
        rate = rates.get(tier)
        if tier not in rates:
            problems.append(f"tier {tier} not run")
        elif rate is None or rate < minimum:
            shown = "no test ran" if rate is None else percent(rate)
            problems.append(f"{tier} pass rate {shown} < {percent(minimum)}")
    return problems


class Verdict(enum.StrEnum):
    PASSES = "passes"
    #: Falls short, inside the window to land a passing result.
    FIXING = "fixing"
    #: Falls short, past the window.
    FAILED = "failed"
    #: No audited result for the release.
    MISSING = "missing"


class VendorGateJson(TypedDict):
    vendor: str
    required: bool
    verdict: str
    verdict_text: str
    why: str
    blocks_release: bool
    submission: str | None
    kit_version: str | None
    grade: str | None
    finished_at: str | None
    tier_pass_rates: dict[str, float | None]
    training_steps: str | None
    #: The latest result's core ATen coverage (``kit.report.core_aten``); None: not attributed.
    core_aten: CoreAtenJson | None
    failing_since: str | None
    hours: int | None
    failing_tests: list[FailingTestJson]
    breaches: int


class GateResultJson(TypedDict):
    """``ckit gate --json``."""

    release: str
    open: bool
    now: str
    policy: GatePolicyJson
    vendors: list[VendorGateJson]
    rejected: list[SubmissionAuditJson]
    repository_failures: list[CheckResultJson]
    closures: list[str]
    canaries: list[str]


@dataclass(frozen=True)
class VendorGate:
    vendor: str
    required: bool
    verdict: Verdict
    #: Why the verdict, one line ("" when the latest result meets the bar).
    why: str
    #: The submission judged: the vendor's latest audited result of the release.
    latest: SubmissionAudit | None = None
    #: When the vendor's current run of failing results began (its first one's run finish).
    failing_since: dt.datetime | None = None
    #: Whole hours left in the window (fixing) or past its start (failed).
    hours: int | None = None
    #: The latest result's failing tests, each with the start of its streak, oldest first.
    failing_tests: tuple[FailingTest, ...] = ()
    #: Whether a test past the window blocks the release (``GatePolicy.close_on_test_breach``).
    breach_closes: bool = False

    @property
    def breaches(self) -> tuple[FailingTest, ...]:
        return breaches(self.failing_tests)

    @property
    def verdict_text(self) -> str:
        if self.verdict is Verdict.FIXING:
            return f"fixing ({self.hours}h left)"
        if self.verdict is Verdict.FAILED:
            return f"failed: unresolved for {self.hours}h"
        if self.verdict is Verdict.MISSING:
            return "missing (required)" if self.required else "missing"
        return "passes"

    @property
    def blocks_release(self) -> bool:
        if self.verdict is Verdict.FAILED:
            return True
        if self.required and self.breach_closes and self.breaches:
            return True
        return self.required and self.verdict is not Verdict.PASSES

    def to_json(self) -> VendorGateJson:
        report = self.latest.report if self.latest else None
        return {
            "vendor": self.vendor,
            "required": self.required,
            "verdict": self.verdict.value,
            "verdict_text": self.verdict_text,
            "why": self.why,
            "blocks_release": self.blocks_release,
            "submission": str(self.latest.key) if self.latest else None,
            "kit_version": self.latest.key.kit_version if self.latest else None,
            "grade": report.grade.name if report else None,
            "finished_at": report.run.finished_at.isoformat() if report else None,
            "tier_pass_rates": tier_pass_rates(report) if report else {},
            "training_steps": training_words(report) if report else None,
            "core_aten": _core_aten_json(report),
            "failing_since": self.failing_since.isoformat() if self.failing_since else None,
            "hours": self.hours,
            "failing_tests": [test.to_json() for test in self.failing_tests],
            "breaches": len(self.breaches),
        }


@dataclass(frozen=True)
class GateResult:
    release: str
    policy: GatePolicy
    now: dt.datetime
    vendors: tuple[VendorGate, ...]
    #: Submissions of the release whose audit failed: never counted, always shown.
    rejected: tuple[SubmissionAudit, ...]
    #: The repository's own checks that failed (its keyring): then no result is trusted.
    repository_failures: tuple[CheckResult, ...]
    #: Why there is nothing to judge, one line each (``nothing_to_judge``): any closes the gate.
    closures: tuple[str, ...] = ()
    #: Audited canary runs of the release: kept in the repository, listed, never counted.
    canaries: tuple[SubmissionAudit, ...] = ()

    @property
    def open(self) -> bool:
        blocked = any(vendor.blocks_release for vendor in self.vendors)
        return not blocked and not self.repository_failures and not self.closures

    def to_json(self) -> GateResultJson:
        return {
            "release": self.release,
            "open": self.open,
            "now": self.now.isoformat(),
            "policy": self.policy.to_json(),
            "vendors": [vendor.to_json() for vendor in self.vendors],
            "rejected": [audit.to_json() for audit in self.rejected],
            "repository_failures": [check.to_json() for check in self.repository_failures],
            "closures": list(self.closures),
            "canaries": [str(audit.key) for audit in self.canaries],
        }


def _finished(audit: SubmissionAudit) -> dt.datetime:
    assert audit.report is not None  # only passed audits with a report get here
    return audit.report.run.finished_at


def is_canary(submission: SubmissionAudit) -> bool:
    """A signed ``--canary`` run (``run.canary``): a torch its standard does not certify."""
    report = submission.report
    return report is not None and report.run.canary


def accepted_results(audit: RepositoryAudit, release: str) -> list[SubmissionAudit]:
    """The release's submissions whose audit passed, oldest run finish first. A canary run is
    never one (nor history for a test's clock), even where the acceptance policy let it pass:
    it ran a torch the release's standard does not certify."""
    results = [
        submission
        for submission in audit.submissions
        if submission.key.torch_release == release
        and submission.passed
        and submission.report is not None
        and not is_canary(submission)
    ]
    return sorted(results, key=lambda s: (_finished(s), s.key))


def _failing_since(history: Sequence[SubmissionAudit], policy: GatePolicy) -> dt.datetime:
    """The run finish of the first failing result after the last passing one."""
    since = _finished(history[-1])
    for submission in reversed(history):
        assert submission.report is not None
        if not shortfalls(submission.report, policy):
            break
        since = _finished(submission)
    return since


def _judge_vendor(
    vendor: str, history: Sequence[SubmissionAudit], policy: GatePolicy, now: dt.datetime
) -> VendorGate:
    required = vendor in policy.required_vendors
    if not history:
        return VendorGate(vendor, required, Verdict.MISSING, "no audited result for the release")
    latest = history[-1]
    assert latest.report is not None
    tests = failing_tests(history, now, policy.max_failing_age_hours)
    judged = VendorGate(vendor, required, Verdict.PASSES, "", latest, failing_tests=tests,
                        breach_closes=policy.close_on_test_breach)
    problems = shortfalls(latest.report, policy)
    if not problems:
        return judged
    since = _failing_since(history, policy)
    age_hours = (now - since).total_seconds() / 3600
    why = "; ".join(problems)
    if age_hours > policy.max_failing_age_hours:
        return dataclasses.replace(judged, verdict=Verdict.FAILED, why=why, failing_since=since,
                                   hours=math.floor(age_hours))
    left = math.ceil(policy.max_failing_age_hours - age_hours)
    return dataclasses.replace(judged, verdict=Verdict.FIXING, why=why, failing_since=since,
                               hours=left)


def known_releases() -> tuple[str, ...]:
    """The torch releases (``2.13``) the standards this kit carries certify."""
    releases = (torch_release_of(load_standard(v).torch_release) for v in carried_versions())
    return tuple(sorted(set(releases)))


def nothing_to_judge(audit: RepositoryAudit, release: str, policy: GatePolicy) -> list[str]:
    """Why the gate has nothing to judge ``release`` on, one line each; empty when it has.

    A gate that opened on no evidence would ship a release nobody certified: each of these
    closes it."""
    reasons = []
    known = known_releases()
    if release not in known:
        reasons.append(f"release {release} is certified by no standard this kit carries "
                       f"(they certify {', '.join(known) or 'none'})")
    if not audit.submissions:
        reasons.append("the repository holds no submission")
    elif not any(s.key.torch_release == release for s in audit.submissions):
        reasons.append(f"the repository holds no submission for release {release}")
    if not policy.required_vendors:
        reasons.append("the gate policy requires no vendor (required_vendors is empty): list "
                       "the vendors the release needs")
    return reasons


def evaluate_gate(
    audit: RepositoryAudit, release: str, policy: GatePolicy, now: dt.datetime
) -> GateResult:
    """Judge every vendor with a submission for ``release`` (and every required one)."""
    results = accepted_results(audit, release)
    of_release = [s for s in audit.submissions if s.key.torch_release == release]
    vendors = sorted({s.key.vendor for s in of_release} | set(policy.required_vendors))
    judged = tuple(
        _judge_vendor(vendor, [s for s in results if s.key.vendor == vendor], policy, now)
        for vendor in vendors
    )
    return GateResult(
        release=release,
        policy=policy,
        now=now,
        vendors=judged,
        rejected=tuple(s for s in of_release if not s.passed),
        repository_failures=tuple(check for check in audit.checks if not check.passed),
        closures=tuple(nothing_to_judge(audit, release, policy)),
        canaries=tuple(s for s in of_release if s.passed and is_canary(s)),
    )
