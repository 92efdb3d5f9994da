"""Checks 8 and 9 of the audit, from the kit's own parts: the acceptance policy and the
root-signed keyring.

The repository's content never chooses them: the trust roots and the policy file come from the
auditor (by default the kit's ``signing/roots`` and the ``acceptance.yaml`` of the standard each
report names, as the kit carries it), so a pull request can neither add a key nor loosen the bar.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Sequence
from pathlib import Path

from kit.acceptance import load_policy
from kit.errors import VerificationError
from kit.grading.released import ReleasedKit
from kit.printable import printable
from kit.repository.entered import committed_times, entered_at, uncommitted
from kit.repository.interface import CheckResult
from kit.repository.layout import SubmissionKey
from kit.repository.submission_checks import KEY, POLICY, TITLES, failed, passed
from kit.signing.keyring import format_utc
from kit.signing.trust import TrustedKeyring, load_trusted_keyring
from kit.standard import load_standard
from kit.verification.verify import VerifiedReport

ACCEPTANCE_POLICY_NAME = "acceptance.yaml"


def standard_policy_path(version: str) -> Path:
    """The acceptance policy of the carried standard ``version`` (its own or inherited)."""
    return load_standard(version).file(ACCEPTANCE_POLICY_NAME)


class PolicyFromFile:
    """Check 8: the policy file, with the vendor of each submission's path as its vendor.

    ``path`` None: the ``acceptance.yaml`` of the standard the submission's report names.
    """

    def __init__(
        self, path: Path | None, released_kits: Sequence[ReleasedKit], now: dt.datetime,
        released_source: Path | None = None,
    ) -> None:
        self.path = path
        self.released_kits = tuple(released_kits)
        self.now = now
        #: The file ``released_kits`` was read from, named by the released-kit check.
        self.released_source = released_source

    def __call__(self, key: SubmissionKey, verified: VerifiedReport) -> tuple[CheckResult, ...]:
        path = self.path or standard_policy_path(verified.content.standard.version)
        policy = load_policy(path, vendor=key.vendor, released_kits=self.released_kits,
                             released_source=self.released_source)
        outcomes = policy.evaluate(verified.content, verified.kit, self.now)
        return tuple(
            CheckResult(
                POLICY,
                f"{TITLES[POLICY]}: {outcome.name}",
                outcome.passed,
                printable(outcome.description if outcome.passed else outcome.why or ""),
            )
            for outcome in outcomes
        )


class KeyValidAtSigning:
    """Check 9: every signer's key is listed in the root-signed keyring for the submission's
    vendor, not revoked, and inside its window when the submission entered the repository
    (``kit.repository.entered``: its commit's repository time, never before the signed finish;
    now when not yet committed or brought by the pull request audited, ``pending``), not at the
    finish time its signer wrote."""

    def __init__(self, trusted: TrustedKeyring | None, problem: str | None,
                 repo_root: Path, now: dt.datetime,
                 pending: Collection[SubmissionKey] = ()) -> None:
        self.trusted = trusted
        self.problem = problem
        self.now = now
        #: Every committed submission's entry time, read from the history in one pass.
        self.committed = uncommitted(committed_times(repo_root), frozenset(pending))

    def __call__(self, key: SubmissionKey, verified: VerifiedReport) -> CheckResult:
        if self.trusted is None:
            return failed(KEY, [f"the keyring is not trusted: {self.problem}"])
        signed_at = entered_at(self.committed, key, verified.content.run.finished_at, self.now)
        problems = [
            problem
            for keyid in verified.keyids
            if (problem := self.trusted.key_problem(keyid, key.vendor, signed_at)) is not None
        ]
        if problems:
            return failed(KEY, [printable(problem) for problem in problems])
        return passed(KEY, f"{len(verified.keyids)} key(s) active for {key.vendor} when it "
                           f"entered the repository ({format_utc(signed_at)})")


def trusted_keyring_or_problem(
    keyring_dir: Path, roots_dir: Path
) -> tuple[TrustedKeyring | None, str | None]:
    """The keyring as the roots vouch for it, or why they do not (a key file the signed
    manifest does not list is a problem too: a pull request cannot add a key by a file)."""
    try:
        trusted = load_trusted_keyring(keyring_dir, roots_dir)
    except VerificationError as exc:
        return None, printable(str(exc))
    unlisted = trusted.unlisted_key_files()
    if unlisted:
        names = ", ".join(printable(path.name) for path in unlisted[:3])
        return trusted, f"{len(unlisted)} key file(s) not in the root-signed keyring.json: {names}"
    return trusted, None
