"""Reading untrusted files with bounds: regular files only, never more than a limit.

A path handed to the verifier may be a FIFO (a read would block for ever), a device such as
/dev/zero (a read never ends), a huge file, or a symlink out of the directory being checked; each
is refused with one line instead of being read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from kit.errors import InputError

_CHUNK = 1 << 20


class FileMissing(InputError):
    """The path does not exist (callers word this case themselves)."""


def _kind(mode: int) -> str:
    kinds = {
        stat.S_ISDIR: "a directory",
        stat.S_ISFIFO: "a FIFO",
        stat.S_ISCHR: "a character device",
        stat.S_ISBLK: "a block device",
        stat.S_ISSOCK: "a socket",
    }
    return next((name for test, name in kinds.items() if test(mode)), "not a plain file")


def _refuse_unless_regular(status: os.stat_result, path: Path, what: str) -> None:
    if not stat.S_ISREG(status.st_mode):
        raise InputError(f"{what} {path} is not a regular file ({_kind(status.st_mode)})")


def _refuse_oversize(size: int, limit: int, path: Path, what: str) -> None:
    if size > limit:
        raise InputError(f"{what} {path} is over the limit of {limit} bytes")


def _read_at_most(fd: int, count: int) -> bytes:
    chunks: list[bytes] = []
    remaining = count
    while remaining > 0:
        chunk = os.read(fd, min(_CHUNK, remaining))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _stat(path: Path, what: str) -> os.stat_result:
    try:
        return os.stat(path)
    except FileNotFoundError:
        raise FileMissing(f"{what} {path} not found") from None
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {exc.strerror}") from None


def read_regular_file(path: Path, *, limit: int, what: str) -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes; ``InputError`` otherwise.

    ``what`` names the file in messages ("envelope", "subject file report.json").
    """
    # Checked before opening: opening some devices has side effects.
    _refuse_unless_regular(_stat(path, what), path, what)
    try:
        # O_NONBLOCK: should a FIFO be swapped in after the check, open must not wait for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {exc.strerror}") from None
    try:
        status = os.fstat(fd)  # the file opened, which need not be the file checked above
        _refuse_unless_regular(status, path, what)
        _refuse_oversize(status.st_size, limit, path, what)
        data = _read_at_most(fd, limit + 1)
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    _refuse_oversize(len(data), limit, path, what)  # it grew while being read
    return data


def path_within(root: Path, name: str, what: str) -> Path:
    """``root / name`` with symlinks resolved; refused when they lead out of ``root``."""
    try:
        resolved = (root / name).resolve()
        inside = resolved.is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a symlink loop
        raise InputError(f"{what} {name} in {root} cannot be resolved (a symlink loop?)") from None
    if not inside:
        raise InputError(f"{what} {name} is a symlink leading out of {root}")
    return resolved
