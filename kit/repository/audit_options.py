"""The auditor's choices, one set for ``ckit audit``, ``ckit gate`` and ``ckit portal``: which
roots must sign the repository's keyring, which acceptance policy applies, which kits are
released. Defaults come from the kit checkout, never from the repository being audited."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kit.grading.released import load_released_kits
from kit.repository.audit import audit_repository
from kit.repository.golden_sample import DEFAULT_GOLDEN_SAMPLE
from kit.repository.interface import RepositoryAudit, SubmissionAudit
from kit.repository.layout import SubmissionKey
from kit.repository.repo_config import CONFIG_DIR, RepoConfig
from kit.repository.submit import Precheck
from kit.repository.trust_and_policy import PolicyFromFile
from kit.signing.trust import default_roots_dir
from kit.verification.content_cache import ContentCache

#: The acceptance policy's option, in every command that takes one.
ACCEPTANCE_POLICY_FLAG = "--acceptance-policy"
#: The gate policy's option (``ckit gate``, ``ckit portal``).
GATE_POLICY_FLAG = "--gate-policy"
#: The old spelling of either, which named the acceptance policy in one command and the gate
#: policy in another: still read, with a line saying which option it now is.
OLD_POLICY_FLAG = "--policy"


class OldSpelling(argparse.Action):
    """An option's former name: stored as the new one is, with one line on stderr naming it."""

    def __init__(self, option_strings: Sequence[str], dest: str, *, new: str,
                 **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.new = new

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(f"ckit: {option_string} is deprecated here; use {self.new}", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_old_policy_spelling(parser: argparse.ArgumentParser | argparse._ArgumentGroup,
                            new: str, dest: str) -> None:
    parser.add_argument(OLD_POLICY_FLAG, type=Path, metavar="FILE", dest=dest,
                        action=OldSpelling, new=new, help=argparse.SUPPRESS)


def add_audit_options(parser: argparse.ArgumentParser, *, old_policy_spelling: bool = True,
                      verify: bool = False, submit: bool = False) -> None:
    """``old_policy_spelling``: ``--policy`` still names the acceptance policy (not in ``ckit
    gate``, where it named the gate's). ``verify``: ``ckit verify``'s defaults differ where
    no ``--repo-config`` is given (a run, not a repository: no roots required). ``submit``:
    ``--repo-config`` defaults to the repository's own (``precheck_from_args``)."""
    group = parser.add_argument_group("audit (the auditor's choices, never the repository's)")
    roots_default = ("none: keyring membership only" if verify
                     else "the kit's signing/roots")
    group.add_argument(
        "--trust-roots", type=Path, metavar="DIR",
        help="root public keys that must sign the repository's keyring/keyring.json "
        f"(default: --repo-config's roots/, else {roots_default})",
    )
    policy_default = ("none: integrity only" if verify else "the acceptance.yaml of the "
                      "standard its report names, as this kit carries it")
    group.add_argument(
        ACCEPTANCE_POLICY_FLAG, type=Path, metavar="FILE", dest="acceptance_policy",
        help="acceptance policy each submission must meet (default: --repo-config's "
        f"acceptance.yaml, else {policy_default})",
    )
    if old_policy_spelling:
        add_old_policy_spelling(group, ACCEPTANCE_POLICY_FLAG, "acceptance_policy")
    group.add_argument(
        "--released-kits", type=Path, metavar="FILE",
        help="list of released kit digests (default: --repo-config's released-kits.yaml, else "
        "the kit's standards/released-kits.yaml)",
    )
    group.add_argument(
        "--golden-sample", type=_golden_sample, default=DEFAULT_GOLDEN_SAMPLE, metavar="N",
        help="golden programs re-run per submission, drawn with its run id as seed (check 10; "
        f"default {DEFAULT_GOLDEN_SAMPLE})",
    )
    filed = (" With a submission directory filed in a repository, verify audits it as `ckit "
             "audit` does: the same checks, the same decision." if verify else "")
    own = (" Default: the repository's own ckit/ on its default branch, where it has one (what "
           "its bot judges a pull request by)." if submit else "")
    group.add_argument(
        "--repo-config", type=Path, metavar="DIR",
        help="the defaults of the options above (and of the gate policy) as `ckit repo init` "
        "filed them: DIR/roots, DIR/released-kits.yaml, DIR/acceptance.yaml, DIR/gate.yaml; "
        f"in CI, the base branch's copy.{filed}{own}",
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
    """The gate policy ``--gate-policy`` names, else ``--repo-config``'s, else None (the
    standard's)."""
    config = repo_config(args)
    return _chosen(getattr(args, "gate_policy", None), config.gate_policy if config else None)


def _chosen(given: Path | None, from_config: Path | None) -> Path | None:
    return given if given is not None else from_config


def released_kits_file(args: argparse.Namespace) -> Path | None:
    """``--released-kits``, else ``--repo-config``'s, else None (the kit's own list)."""
    config = repo_config(args)
    return _chosen(args.released_kits, config.released_kits if config else None)


def trust_roots_dir(args: argparse.Namespace) -> Path | None:
    """``--trust-roots``, else ``--repo-config``'s roots, else None (the caller's default)."""
    config = repo_config(args)
    return _chosen(args.trust_roots, config.roots if config else None)


def acceptance_policy_path(args: argparse.Namespace) -> Path | None:
    """``--acceptance-policy``, else ``--repo-config``'s, else None (the caller's default)."""
    config = repo_config(args)
    return _chosen(args.acceptance_policy, config.acceptance_policy if config else None)


def audit_from_args(
    args: argparse.Namespace, repo: Path, now: dt.datetime | None = None,
    only: frozenset[SubmissionKey] | None = None,
) -> RepositoryAudit:
    released_file = released_kits_file(args)
    released = load_released_kits(released_file)
    now = now or dt.datetime.now(dt.UTC)
    roots = trust_roots_dir(args)
    policy = acceptance_policy_path(args)
    return audit_repository(
        repo,
        changed_since=getattr(args, "changed_since", None),
        released_kits=released,
        now=now,
        trust_roots=roots or default_roots_dir(),
        policy=PolicyFromFile(policy, released, now, released_file),
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
        (audited,) = audit_from_args(_with_own_config(args, clone), clone,
                                     only=frozenset({key})).submissions
        return audited

    return precheck


def _with_own_config(args: argparse.Namespace, clone: Path) -> argparse.Namespace:
    """``args`` with ``--repo-config`` defaulting to the clone's ``ckit/``: the fresh clone is
    on the repository's default branch, whose ``ckit/`` its bot judges pull requests by, so the
    pre-check refuses what the bot would. A repository without one keeps the kit's defaults."""
    own = clone / CONFIG_DIR
    if getattr(args, "repo_config", None) is not None or not own.is_dir():
        return args
    return argparse.Namespace(**{**vars(args), "repo_config": own})
