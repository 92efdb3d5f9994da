"""Writing inside a run's output directory: never through a symbolic link, never over a file.

A link planted in ``--out`` (``journal.jsonl -> ~/.bashrc``, dangling or not) would make the kit
write where the user never pointed it, and an existing file would be silently replaced. Every
file the run writes is therefore opened with ``O_NOFOLLOW``, and those that must be new with
``O_EXCL`` (or published with ``link``, which never replaces): the open fails instead.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path

from kit.errors import InputError

#: ``link`` is unsupported here (FAT, some network shares): publish by an exclusive create.
_NO_HARD_LINKS = frozenset({errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.ENOSYS})


def _refusal(path: Path, exc: OSError) -> InputError:
    if isinstance(exc, FileExistsError):
        return InputError(f"{path} already exists; the kit never overwrites a file there")
    if exc.errno == errno.ELOOP:
        return InputError(f"{path} is a symbolic link; the kit never writes through one")
    return InputError(f"{path}: cannot write: {exc.strerror}")


def open_for_append(path: Path) -> int:
    """A descriptor appending to ``path`` (created if missing); a link there is refused."""
    try:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise _refusal(path, exc) from None


def make_real_dir(path: Path) -> None:
    """Create the directory ``path``, or accept one already there that is not a link."""
    try:
        path.mkdir()
    except FileExistsError:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            raise InputError(
                f"{path} exists and is not a directory (a link or a file); the kit writes "
                "only into a real directory"
            ) from None
    except OSError as exc:
        raise _refusal(path, exc) from None


def write_new_file(path: Path, data: bytes) -> Path:
    """Write ``path``, which must not exist (not even as a dangling link), all at once.

    The bytes go to a temp file first, then ``link`` publishes it under its name: a reader never
    sees half a file, and unlike ``rename`` a link never replaces what is already there.
    """
    try:
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise _refusal(path, exc) from None
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temp, 0o644)
        os.link(temp, path, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise _refusal(path, exc) from None
        _create_exclusively(path, data)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
    return path


def _create_exclusively(path: Path, data: bytes) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise _refusal(path, exc) from None
    with os.fdopen(fd, "wb") as stream:
        stream.write(data)
