"""``ckit verify ENVELOPE``: check a signed report against the keyring, then its content.

With an acceptance option (``--acceptance-policy``, ``--require-released``, ``--min-grade``,
``--max-age-days``, ``--vendor``) verify then judges the verified report against that policy
(``kit.acceptance``): one line per check, and exit code 4 when any is not met.

With ``--repo-config DIR`` (the repository's configuration, as ``ckit audit`` reads it), a
submission directory filed in a repository is audited as ``ckit audit`` audits it, by the same
code: the same numbered checklist, the same decision. A run directory elsewhere is verified with
the configuration's roots, released kits and acceptance policy as defaults.

Every printed line goes through ``printable``: the report's fields are the signer's words, and
a carriage return or an ANSI escape in one could redraw the line into a forged verdict.
"""

from __future__ import annotations

import argparse
import datetime as dt
from collections.abc import Sequence
from pathlib import Path

from kit.acceptance import AcceptanceCheck, AcceptancePolicy, PolicyOutcome, accepted, load_policy
from kit.acceptance.kit_checks import ReleasedKitCheck
from kit.acceptance.result_checks import MaxAgeCheck, MinGradeCheck, VendorCheck, grade_order
from kit.cli import add_command
from kit.cli.cmd_audit import audit_lines
from kit.errors import ExitCode, InputError
from kit.grading.released import ReleasedKit, load_released_kits
from kit.printable import printable
from kit.repository.audit_options import (
    acceptance_policy_path,
    add_audit_options,
    audit_from_args,
    released_kits_file,
    repo_config,
    trust_roots_dir,
)
from kit.repository.layout import KEYRING_DIR
from kit.repository.one_submission import FiledSubmission, filed_submission
from kit.rundir import ENVELOPE_NAME
from kit.signing.keyring import default_keyring_dir
from kit.signing.trust import TrustedKeyring, load_trusted_keyring
from kit.verification.content import kit_standing
from kit.verification.content_cache import ContentCache
from kit.verification.verify import VerifiedReport, verify_envelope
from kit.verification.verify_body import VerifiedBody, envelope_is_body, verify_body_envelope


def _lines(verified: VerifiedReport | VerifiedBody, verdict_word: str = "OK") -> list[str]:
    kit_version = (verified.claim.kit_version if isinstance(verified, VerifiedBody)
                   else verified.kit_version)
    verdict = (
        f"{verdict_word}: {verified.vendor} report signed by {verified.keyid[:16]}, "
        f"kit {kit_version}, grade {verified.grade_name}"
    )
    return [verdict, *(f"note: {note}" for note in verified.notes)]


def _option_checks(
    args: argparse.Namespace, released: Sequence[ReleasedKit], source: Path | None
) -> list[AcceptanceCheck]:
    checks: list[AcceptanceCheck] = []
    if args.require_released:
        checks.append(ReleasedKitCheck(tuple(released)) if source is None
                      else ReleasedKitCheck(tuple(released), str(source)))
    if args.vendor is not None:
        checks.append(VendorCheck(args.vendor))
    if args.min_grade is not None:
        checks.append(MinGradeCheck(args.min_grade, grade_order()))
    if args.max_age_days is not None:
        checks.append(MaxAgeCheck(args.max_age_days))
    return checks


def _policy(args: argparse.Namespace, released: Sequence[ReleasedKit], source: Path | None
            ) -> AcceptancePolicy | None:
    """The policy the options ask for; None when they ask for none (integrity only)."""
    checks = _option_checks(args, released, source)
    policy_file = acceptance_policy_path(args)
    if policy_file is not None:
        from_file = load_policy(policy_file, vendor=args.vendor, released_kits=released,
                                released_source=source)
        return from_file.with_checks(checks)
    return AcceptancePolicy(tuple(checks)) if checks else None


def _outcome_line(outcome: PolicyOutcome) -> str:
    if outcome.passed:
        return f"✓ {outcome.name}: {outcome.description}"
    return f"✗ {outcome.name}: {outcome.why}"


def _verdict(outcomes: Sequence[PolicyOutcome]) -> str:
    failed = sum(not outcome.passed for outcome in outcomes)
    if not failed:
        return f"ACCEPTED: all {len(outcomes)} acceptance checks met"
    return f"REJECTED: {failed} of {len(outcomes)} acceptance checks not met"


def _trusted_keyring(args: argparse.Namespace) -> TrustedKeyring | None:
    """With --trust-roots: the keyring's manifest must be signed by those roots, and every
    signer's key must be listed, not revoked, and inside its window at signing time."""
    roots = trust_roots_dir(args)
    if roots is None:
        return None
    return load_trusted_keyring(_keyring_dir(args) or default_keyring_dir(), roots)


def _keyring_dir(args: argparse.Namespace) -> Path | None:
    """``--keyring``, else the keyring of the repository ``--repo-config`` belongs to (its
    roots sign that one), else None (the kit's)."""
    if args.keyring is not None:
        return Path(args.keyring)
    config = repo_config(args)
    beside = config.directory.parent / KEYRING_DIR if config is not None else None
    return beside if beside is not None and beside.is_dir() else None


#: verify's own options that a filed submission's audit decides for itself, as ``ckit audit``
#: does: its repository's keyring, its files, the vendor of its path, the configuration's policy.
_NOT_FOR_FILED = (("keyring", "--keyring"), ("files", "--files"), ("vendor", "--vendor"),
                  ("min_grade", "--min-grade"), ("max_age_days", "--max-age-days"),
                  ("require_released", "--require-released"))


def _audit_filed(args: argparse.Namespace, filed: FiledSubmission) -> int:
    """The submission audited as ``ckit audit`` audits it: the same checks, lines, decision."""
    for dest, flag in _NOT_FOR_FILED:
        if getattr(args, dest):
            raise InputError(
                f"{flag} does not apply to {filed.key} under --repo-config: a filed submission "
                "is audited as `ckit audit` audits it (its repository's keyring, the vendor of "
                "its path, the configuration's policy)"
            )
    audit = audit_from_args(args, filed.repo_root, only=frozenset({filed.key}))
    for line in audit_lines(audit):
        print(line)
    return ExitCode.OK if audit.passed else ExitCode.VERIFICATION_FAILED


def _verify_body(args: argparse.Namespace, released: Sequence[ReleasedKit],
                 policy: AcceptancePolicy | None, now: dt.datetime) -> int:
    """A ``body``-format report; a policy judges the typed report, so it is read (no cache)."""
    cache = ContentCache(args.content_cache) if args.content_cache and policy is None else None
    verified = verify_body_envelope(
        args.envelope, keyring_dir=_keyring_dir(args), files_dir=args.files, now=now,
        released_kits=released, trusted=_trusted_keyring(args), cache=cache,
    )
    if policy is None or verified.report is None:
        for line in _lines(verified):
            print(printable(line))
        return ExitCode.OK
    outcomes = policy.evaluate(verified.report, kit_standing(verified.report, released), now)
    lines = [*_lines(verified, "verified"), *map(_outcome_line, outcomes), _verdict(outcomes)]
    for line in lines:
        print(printable(line))
    return ExitCode.OK if accepted(outcomes) else ExitCode.VERIFICATION_FAILED


def _verify(args: argparse.Namespace) -> int:
    filed = filed_submission(args.envelope) if args.repo_config is not None else None
    if filed is not None:
        return _audit_filed(args, filed)
    released_file = released_kits_file(args)
    released = load_released_kits(released_file)
    # Built before the envelope is read: a bad option or policy file fails as an input error.
    policy = _policy(args, released, released_file)
    now = dt.datetime.now(dt.UTC)
    if envelope_is_body(args.envelope):
        return _verify_body(args, released, policy, now)
    verified = verify_envelope(
        args.envelope, keyring_dir=_keyring_dir(args), files_dir=args.files, now=now,
        released_kits=released, trusted=_trusted_keyring(args),
    )
    if policy is None:
        for line in _lines(verified):
            print(printable(line))
        return ExitCode.OK
    outcomes = policy.evaluate(verified.content, verified.kit, now)
    lines = [*_lines(verified, "verified"), *map(_outcome_line, outcomes), _verdict(outcomes)]
    for line in lines:
        print(printable(line))
    return ExitCode.OK if accepted(outcomes) else ExitCode.VERIFICATION_FAILED


def _add_acceptance_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "acceptance (after the integrity checks; every check given must be met, else exit 4)"
    )
    group.add_argument(
        "--require-released",
        action="store_true",
        help="the kit digest must be a released kit's (--released-kits, else --repo-config's, "
        "else standards/released-kits.yaml)",
    )
    group.add_argument(
        "--min-grade", metavar="NAME", help="the grade must be NAME or better"
    )
    group.add_argument(
        "--max-age-days",
        type=int,
        metavar="N",
        help="the run must have finished at most N days ago",
    )
    group.add_argument(
        "--vendor",
        metavar="V",
        help="the report must be vendor V's (a policy's vendor_is_submission_path uses V)",
    )


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers,
        "verify",
        "verify a signed report: signature, signer's vendor, every report file's digest, and "
        "the report's content (schema, standard, kit, times, grade recomputed); with an "
        "acceptance option, then whether the report meets that policy",
        [
            f"ckit verify results/acme/{ENVELOPE_NAME}",
            f"ckit verify submission/{ENVELOPE_NAME} --keyring signing/keyring --files submission",
            f"ckit verify submission/{ENVELOPE_NAME} --acceptance-policy acceptance.yaml "
            "--vendor acme",
            "ckit verify results/submissions/2.13/acme/0.1.0/RUN_ID --repo-config results/ckit",
        ],
    )
    parser.add_argument(
        "envelope",
        type=Path,
        metavar="ENVELOPE",
        help=f"the {ENVELOPE_NAME} file (or the directory holding it)",
    )
    parser.add_argument(
        "--keyring", type=Path, help="keyring directory (default: the kit's signing/keyring)"
    )
    parser.add_argument(
        "--files",
        type=Path,
        metavar="DIR",
        help="directory holding the report files (default: the envelope's directory)",
    )
    parser.add_argument(
        "--content-cache",
        type=Path,
        metavar="DIR",
        help="record the content checks' verdict of a body-format report in DIR, per signed "
        "payload, and read it back instead of checking again (integrity is always checked)",
    )
    # The audit's choices, by the audit's names: with --repo-config, a filed submission is
    # audited as `ckit audit` audits it.
    add_audit_options(parser, verify=True)
    _add_acceptance_options(parser)
    parser.set_defaults(handler=_verify)
