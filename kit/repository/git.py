"""Running real ``git`` for ``submit`` and ``audit``: every failure becomes one ``InputError`` line.

The caller's ``GIT_DIR``-style variables are dropped so each command acts on the directory it is
given, and git never prompts: a push that needs credentials fails instead of hanging.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from kit.errors import InputError
from kit.printable import printable

#: Variables that would point git at another repository than the one a command names.
_REDIRECTING = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                "GIT_COMMON_DIR", "GIT_NAMESPACE")
#: Who commits when git config names nobody.
DEFAULT_AUTHOR = ("ckit", "ckit@localhost")


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _REDIRECTING}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"  # messages in one language, whatever the user's locale
    return env


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return printable(lines[-1]) if lines else "no message"


def git(args: Sequence[str], cwd: Path, *, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``git ARGS`` in ``cwd``; raises ``InputError`` naming the command when it fails."""
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, env=_environment(), capture_output=True, text=True,
            errors="replace", stdin=subprocess.DEVNULL, check=False,
        )
    except FileNotFoundError:
        raise InputError("git is not installed (needed to submit and audit)") from None
    except OSError as exc:
        raise InputError(f"cannot run git in {cwd}: {exc.strerror}") from None
    if check and done.returncode != 0:
        raise InputError(f"git {args[0]} failed: {_last_line(done.stderr or done.stdout)}")
    return done


def output(args: Sequence[str], cwd: Path) -> str:
    return git(args, cwd).stdout


def configured_author(cwd: Path) -> tuple[str, str] | None:
    """The author git config gives in ``cwd``, or ``None`` when it names no one."""
    name = git(["config", "user.name"], cwd, check=False).stdout.strip()
    email = git(["config", "user.email"], cwd, check=False).stdout.strip()
    return (name, email) if name and email else None


def refuse_option_like(value: str, what: str) -> str:
    """A ref or URL starting with ``-`` would be read by git as an option."""
    if not value or value.startswith("-"):
        raise InputError(f"{what} {printable(value)!r} is not valid (empty or starts with '-')")
    return value


def blob(spec: str, cwd: Path, limit: int) -> bytes | None:
    """The bytes of ``COMMIT:PATH``, or ``None`` when there is none or it exceeds ``limit``."""
    size = git(["cat-file", "-s", spec], cwd, check=False)
    if size.returncode != 0 or not size.stdout.strip().isdigit():
        return None
    if int(size.stdout.strip()) > limit:
        return None
    done = subprocess.run(
        ["git", "cat-file", "blob", spec], cwd=cwd, env=_environment(), capture_output=True,
        stdin=subprocess.DEVNULL, check=False,
    )
    return done.stdout if done.returncode == 0 else None


def is_checkout(directory: Path) -> bool:
    """Whether ``directory`` is the top of a git checkout (not merely inside another one)."""
    return (directory / ".git").exists()


def has_no_commit(directory: Path) -> bool:
    """Whether ``directory`` is a checkout whose HEAD names no commit yet (just initialised)."""
    if not is_checkout(directory):
        return False
    return git(["rev-parse", "--verify", "--quiet", "HEAD"], directory, check=False).returncode != 0


#: What a repository with no commit yet is told (``ckit gate``, the audit's history check).
NO_COMMIT_YET = ("the repository has no commit yet: commit what `ckit repo init` wrote (git add -A "
                 "&& git commit), then vendors submit to it")
