"""Check 10 of ``ckit audit``: a submission's golden artifacts hold up.

The manifest must be a subject of the verified statement (so its digest is the vendor's signed
word), every file it lists intact and nothing else under ``golden/``, and a sample of its
programs, drawn with the submission's run id as the seed so an auditor can repeat the draw
(``ckit golden check DIR --sample N --seed RUN_ID``), re-run with the reference runtimes.
"""

from __future__ import annotations

from pathlib import Path

from kit.errors import KitError
from kit.printable import printable
from kit.repository.interface import CheckResult
from kit.repository.layout import SubmissionKey
from kit.repository.submission_checks import GOLDEN, failed, passed
from kit.rundir import GOLDEN_MANIFEST, RunDir
from kit.verification.verify import VerifiedReport

#: Programs re-run per submission unless the auditor asks for another number.
DEFAULT_GOLDEN_SAMPLE = 5


def check_golden_sample(
    key: SubmissionKey, directory: Path, verified: VerifiedReport, sample: int
) -> CheckResult:
    submitted = RunDir(directory)
    if not submitted.golden_manifest.exists() and not submitted.golden.exists():
        return passed(GOLDEN, "no golden artifacts")
    if GOLDEN_MANIFEST not in {subject.name for subject in verified.subjects}:
        return failed(GOLDEN, [f"{GOLDEN_MANIFEST} is not a subject of the signed statement"])
    from kit.golden_check.check import check_golden

    try:
        result = check_golden(directory, sample, key.run_id)
    except KitError as exc:
        return failed(GOLDEN, [printable(str(exc))])
    if not result.passed:
        return failed(GOLDEN, result.problem_lines())
    rerun = sum(verdict.rerun for verdict in result.verdicts)
    return passed(GOLDEN, f"{len(result.verdicts)} entries intact, {rerun} re-run "
                          f"(sample {sample}, seed {key.run_id})")
