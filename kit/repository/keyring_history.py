"""Keyring rollback: the repository's keyring may never be older than one its roots signed before.

Every signed keyring.json carries a ``version`` that ``ckit keys sign-keyring`` raises whenever
the roots start signing new content. An older keyring with its still-valid signature (one that
lists a key as active before it was revoked) would otherwise pass the root check, so the auditor
also reads the repository's own history, offline: every edition of ``keyring/keyring.json`` ever
committed on the audited refs (HEAD, and the ``--changed-since`` ref) whose signatures the
auditor's roots accept. The keyring in the checkout must be at least the highest of them.

History is append-only for auditors: a pull request cannot remove an edition from the history
of the branch it is merged into. A shallow checkout hides that history, so it is refused; a
plain directory (not a checkout) has none, and the check says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from kit.errors import InputError, VerificationError
from kit.repository import git
from kit.repository.layout import KEYRING_DIR
from kit.signing.dsse import decode_envelope
from kit.signing.keyring import (
    MANIFEST_NAME,
    MANIFEST_SIGNATURE_NAME,
    MAX_MANIFEST_BYTES,
    MAX_MANIFEST_SIGNATURE_BYTES,
    parse_manifest,
)
from kit.signing.trust import TrustedKeyring, check_manifest_signatures
from kit.strict_json import loads_strict

_MANIFEST = PurePosixPath(KEYRING_DIR, MANIFEST_NAME).as_posix()
_SIGNATURE = PurePosixPath(KEYRING_DIR, MANIFEST_SIGNATURE_NAME).as_posix()


@dataclass(frozen=True)
class SignedEdition:
    """A keyring.json the roots signed, as committed in the repository's history."""

    version: int
    commit: str


def _signed_version(repo_root: Path, commit: str, trusted: TrustedKeyring) -> int | None:
    """The version of ``commit``'s keyring.json if the roots signed it there, else None."""
    data = git.blob(f"{commit}:{_MANIFEST}", repo_root, MAX_MANIFEST_BYTES)
    signature = git.blob(f"{commit}:{_SIGNATURE}", repo_root, MAX_MANIFEST_SIGNATURE_BYTES)
    if data is None or signature is None:
        return None
    try:
        envelope = decode_envelope(loads_strict(signature, what=MANIFEST_SIGNATURE_NAME))
        check_manifest_signatures(data, envelope, trusted.roots, trusted.keyring)
        return parse_manifest(data).version
    except VerificationError:
        return None  # never signed by these roots: it sets no floor


def highest_signed_edition(
    repo_root: Path, trusted: TrustedKeyring, refs: Sequence[str]
) -> SignedEdition | None:
    """The highest-versioned keyring.json the roots signed in the history of ``refs``."""
    commits = git.output(
        ["log", "--format=%H", *refs, "--", _MANIFEST, _SIGNATURE], repo_root
    ).split()
    best: SignedEdition | None = None
    for commit in commits:
        version = _signed_version(repo_root, commit, trusted)
        if version is not None and (best is None or version > best.version):
            best = SignedEdition(version, commit)
    return best


def rollback_problem(
    repo_root: Path, trusted: TrustedKeyring, refs: Sequence[str]
) -> tuple[str | None, str]:
    """(why the keyring is a rollback, or None; a note on what was compared)."""
    current = trusted.manifest.version
    if not git.is_checkout(repo_root):
        return None, f"{MANIFEST_NAME} version {current}; not a git checkout, so no history"
    for ref in refs:
        git.refuse_option_like(ref, "ref")
    if git.has_no_commit(repo_root):
        return None, f"{MANIFEST_NAME} version {current}; {git.NO_COMMIT_YET}, so no history"
    shallow = git.output(["rev-parse", "--is-shallow-repository"], repo_root).strip()
    if shallow == "true":
        return (
            "the checkout is shallow, so keyring rollbacks cannot be checked: fetch its whole "
            "history (git fetch --unshallow)",
            "",
        )
    try:
        best = highest_signed_edition(repo_root, trusted, refs)
    except InputError as exc:
        return f"cannot read the keyring's history: {exc}", ""
    if best is not None and best.version > current:
        return (
            f"{MANIFEST_NAME} version {current} is older than version {best.version}, which the "
            f"roots signed in commit {best.commit[:12]}: a keyring may not be rolled back",
            "",
        )
    return None, f"{MANIFEST_NAME} version {current}; no newer one signed in the history"
