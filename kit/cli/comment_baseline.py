"""Whether the baseline of ``ckit show --format comment --against BASELINE`` is what it claims.

The comment's regressions are read against the baseline, so a baseline nobody vouches for (an
unsigned run, one edited after signing, another vendor's, one whose grade does not recompute
under its own standard) would make any canary look clean. The front door verifies it, because
views never import the verifier: verified, the comment ends by naming its signer, vendor and
standard; not verified, the comment's first line says so and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kit.errors import InputError, VerificationError
from kit.printable import printable
from kit.verification.verify import verify_envelope


@dataclass(frozen=True)
class BaselineCheck:
    verified: bool
    #: One line: who signed it and under which standard, or why it is not verified.
    why: str


def _run_dir(path: Path) -> Path:
    """``--against`` names a run directory or its report.json; the envelope is beside it."""
    return path if path.is_dir() else path.parent


def check_baseline(path: Path, vendor: str, keyring: Path | None) -> BaselineCheck:
    """The whole ``ckit verify`` of ``path`` with ``keyring`` (default: the kit's), and the
    vendor it is signed for must be the commented run's ``vendor``."""
    try:
        verified = verify_envelope(_run_dir(path), keyring_dir=keyring)
    except (VerificationError, InputError) as exc:
        return BaselineCheck(False, printable(str(exc)))
    if verified.vendor != vendor:
        return BaselineCheck(False, printable(
            f"it is vendor {verified.vendor}'s run, signed for {verified.vendor}, not {vendor}'s"))
    standard = verified.content.standard.version
    return BaselineCheck(True, printable(
        f"signed by key {verified.keyid[:16]} of vendor {verified.vendor}, standard {standard}, "
        "its grade recomputed"))


#: Characters of the baseline's line: the comment stays under GitHub's limit
#: (``kit.views.comment.MAX_COMMENT_CHARS`` leaves room for it).
MAX_WHY_CHARS = 1000


def with_baseline_check(lines: list[str], check: BaselineCheck) -> list[str]:
    """The comment, its first line saying when the baseline is not verified."""
    why = check.why if len(check.why) <= MAX_WHY_CHARS else check.why[:MAX_WHY_CHARS - 1] + "…"
    if check.verified:
        return [*lines, "", f"Baseline verified: {why}."]
    return [f"**Baseline not verified**: {why}; the comparison below is not evidence.",
            "", *lines]
