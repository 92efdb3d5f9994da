"""The audit's two seams: the acceptance policy (check 8) and the signing-key check (check 9)
receive each verified submission and their results are the audit's."""

from __future__ import annotations

from repository_helpers import SharedRepo

from kit.repository.audit import audit_repository
from kit.repository.interface import CheckResult
from kit.repository.layout import SubmissionKey
from kit.repository.submission_checks import POLICY, TITLES
from kit.verification.verify import VerifiedReport


def test_the_acceptance_policy_and_key_check_decide_checks_8_and_9(shared: SharedRepo) -> None:
    seen: list[tuple[SubmissionKey, str]] = []

    def only_complete_runs(key: SubmissionKey, verified: VerifiedReport
                           ) -> tuple[CheckResult, ...]:
        complete = verified.content.run.complete
        why = "" if complete else f"{key.vendor}: a narrowed run is not accepted"
        return (CheckResult(POLICY, TITLES[POLICY], complete, why),)

    def key_valid(key: SubmissionKey, verified: VerifiedReport) -> CheckResult:
        seen.append((key, verified.vendor))
        return CheckResult(9, "signing key valid", True, verified.keyid[:16])

    audit = audit_repository(shared.checkout, policy=only_complete_runs, key_check=key_valid)
    assert not audit.passed
    assert sorted(vendor for _, vendor in seen) == ["cpu", "simnpu"]
    assert all(key.vendor == vendor for key, vendor in seen)
    for submission in audit.submissions:
        failure = submission.first_failure
        assert failure is not None and failure.number == POLICY
        assert failure.why == f"{submission.key.vendor}: a narrowed run is not accepted"
        # The key check (9) is the last seam; checks 10 (golden artifacts) and 11 (the derived
        # files) follow it.
        assert [check.number for check in submission.checks][-3:] == [9, 10, 11]
        assert submission.checks[-3].passed
