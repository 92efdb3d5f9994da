"""The auditor's choices, one set for ``ckit audit``, ``ckit gate`` and ``ckit portal``: which
roots must sign the repository's keyring, which acceptance policy applies, which kits are
released. Defaults come from the kit checkout, never from the repository being audited."""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from kit.grading.released import load_released_kits
from kit.repository.audit import audit_repository
from kit.repository.golden_sample import DEFAULT_GOLDEN_SAMPLE
from kit.repository.interface import RepositoryAudit, SubmissionAudit
from kit.repository.layout import SubmissionKey
from kit.repository.repo_config import RepoConfig
from kit.repository.submit import Precheck
from kit.repository.trust_and_policy import PolicyFromFile
from kit.signing.trust import default_roots_dir
from kit.verification.content_cache import ContentCache


def add_audit_options(parser: argparse.ArgumentParser, policy_flag: str = "--policy") -> None:
    """``policy_flag``: ``ckit gate`` has a policy of its own and names this one apart."""
    group = parser.add_argument_group("audit (the auditor's choices, never the repository's)")
    group.add_argument(
        "--trust-roots", type=Path, metavar="DIR",
        help="root public keys that must sign the repository's keyring/keyring.json "
        "(default: the kit's signing/roots)",
    )
    group.add_argument(
        policy_flag, type=Path, metavar="FILE", dest="acceptance_policy",
        help="acceptance policy each submission must meet (default: the acceptance.yaml of "
        "the standard its report names, as this kit carries it)",
    )
    group.add_argument(
        "--released-kits", type=Path, metavar="FILE",
        help="list of released kit digests (default: the kit's standards/released-kits.yaml)",
    )
    group.add_argument(
        "--golden-sample", type=_golden_sample, default=DEFAULT_GOLDEN_SAMPLE, metavar="N",
        help="golden programs re-run per submission, drawn with its run id as seed (check 10; "
        f"default {DEFAULT_GOLDEN_SAMPLE})",
    )
    group.add_argument(
        "--repo-config", type=Path, metavar="DIR",
        help="the defaults of the options above (and of the gate policy) as `ckit repo init` "
        "filed them: DIR/roots, DIR/released-kits.yaml, DIR/acceptance.yaml, DIR/gate.yaml; "
        "in CI, the base branch's copy",
    )


def _golden_sample(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = -1
    if number < 0:
        raise argparse.ArgumentTypeError("--golden-sample must be a non-negative number of "
                                         "programs")
    return number


def repo_config(args: argparse.Namespace) -> RepoConfig | None:
    """``--repo-config``, checked; None when not given."""
    directory: Path | None = getattr(args, "repo_config", None)
    return RepoConfig(directory).checked() if directory is not None else None


def gate_policy_path(args: argparse.Namespace) -> Path | None:
    """The gate policy ``--policy`` names, else ``--repo-config``'s, else None (the standard's)."""
    config = repo_config(args)
    return _chosen(getattr(args, "gate_policy", None), config.gate_policy if config else None)


def _chosen(given: Path | None, from_config: Path | None) -> Path | None:
    return given if given is not None else from_config


def audit_from_args(
    args: argparse.Namespace, repo: Path, now: dt.datetime | None = None,
    only: frozenset[SubmissionKey] | None = None,
) -> RepositoryAudit:
    config = repo_config(args)
    released = load_released_kits(
        _chosen(args.released_kits, config.released_kits if config else None)
    )
    now = now or dt.datetime.now(dt.UTC)
    roots = _chosen(args.trust_roots, config.roots if config else None)
    policy = _chosen(args.acceptance_policy, config.acceptance_policy if config else None)
    return audit_repository(
        repo,
        changed_since=getattr(args, "changed_since", None),
        released_kits=released,
        now=now,
        trust_roots=roots or default_roots_dir(),
        policy=PolicyFromFile(policy, released, now),
        golden_sample=getattr(args, "golden_sample", DEFAULT_GOLDEN_SAMPLE),
        only=only,
        content_cache=_content_cache(args),
    )


def add_content_cache_option(parser: argparse.ArgumentParser) -> None:
    """``ckit audit`` and ``ckit submit`` only: a verdict read back leaves the body undecoded,
    so the audit carries no typed report for it, which the gate and the portal read."""
    parser.add_argument(
        "--content-cache", type=Path, metavar="DIR",
        help="the auditor's record of body-format reports' content verdicts, one per signed "
        "payload: written when a report is first checked, read back after (integrity is "
        "always checked); never a directory of the audited repository",
    )


def _content_cache(args: argparse.Namespace) -> ContentCache | None:
    directory: Path | None = getattr(args, "content_cache", None)
    return ContentCache(directory) if directory is not None else None


def precheck_from_args(args: argparse.Namespace) -> Precheck:
    """``ckit submit``'s pre-check: the audit of the one submission filed in the clone, with
    the auditor's choices given as ``ckit audit`` takes them."""

    def precheck(clone: Path, key: SubmissionKey) -> SubmissionAudit:
        (audited,) = audit_from_args(args, clone, only=frozenset({key})).submissions
        return audited

    return precheck
