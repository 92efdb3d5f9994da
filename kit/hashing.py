"""sha256 helpers, and the kit digest that pins a report to the exact kit and standard."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from kit import paths

_CHUNK = 1 << 20

#: The list of released kit digests, under standards/. It is left out of the kit digest: a
#: release adds its own digest to it, which must not change that digest.
RELEASED_KITS = "released-kits.yaml"
_NOT_HASHED = frozenset({f"standards/{RELEASED_KITS}"})

K = TypeVar("K")
V = TypeVar("V")


def released_kits_path() -> Path:
    return paths.standards_dir() / RELEASED_KITS


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def tree_digest(root: Path, entries: Iterable[Path]) -> str:
    """sha256 over each entry's path relative to ``root`` and the sha256 of its content, in
    path order: a link counts by its target's text (it is copied as a link, never followed),
    anything else that is not a regular file by a marker (never read: a FIFO would block)."""
    digest = hashlib.sha256()
    for path in sorted(entries):
        digest.update(f"{path.relative_to(root).as_posix()}\0".encode())
        if path.is_symlink():
            content = os.readlink(path).encode()
        elif path.is_file():
            content = path.read_bytes()
        else:
            content = b"\0not a regular file\0"
        digest.update(hashlib.sha256(content).digest())
    return digest.hexdigest()


def _kit_files() -> Iterable[tuple[str, Path]]:
    # Names are relative to each root, so the digest does not depend on where the kit lives.
    roots = {"kit": paths.package_dir(), "standards": paths.standards_dir()}
    for name, root in roots.items():
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                rel = f"{name}/{path.relative_to(root).as_posix()}"
                if rel not in _NOT_HASHED:
                    yield rel, path


def kit_digest() -> str:
    """sha256 over (relative path, file sha256) of the kit's code and standards, sorted by path.

    Two checkouts of the same commit give the same digest; any edited byte changes it, except
    in the list of released kit digests (``RELEASED_KITS``). Hashing every file takes a fifth of
    a second; a process that builds or checks many reports hashes them again only when a file's
    path, size, modification time or inode has changed since (``_kit_digests``).
    """
    files = sorted(_kit_files())

    def digest() -> str:
        lines = [f"{rel}\0{sha256_file(path)}\n" for rel, path in files]
        return sha256_bytes("".join(lines).encode("utf-8"))

    signature = tuple((rel, *_stat_key(path)) for rel, path in files)
    return kept_while_unchanged(_kit_digests, signature, (key[2] for key in signature), digest)


#: The kit's files as they stood (path, size, modification time, inode) -> their digest.
_kit_digests: dict[tuple[tuple[str, int, int, int], ...], str] = {}

#: A file's modification time is the kernel's coarse clock: within this many nanoseconds of now,
#: a second write of the same size could leave it unchanged ("racy git"), so no cache keyed on
#: it is kept while anything under it is that young.
SETTLE_NS = 2_000_000_000


def kept_while_unchanged(kept: dict[K, V], signature: K, mtimes_ns: Iterable[int],
                         compute: Callable[[], V]) -> V:
    """``kept[signature]``, else ``compute()``: kept alone (one answer per process is worth
    keeping), unless one of ``mtimes_ns``, the modification times the signature holds, is too
    recent to key on (``SETTLE_NS``)."""
    if signature in kept:
        return kept[signature]
    value = compute()
    kept.clear()
    if max(mtimes_ns, default=0) <= time.time_ns() - SETTLE_NS:
        kept[signature] = value
    return value


def _stat_key(path: Path) -> tuple[int, int, int]:
    status = path.stat()
    return status.st_size, status.st_mtime_ns, status.st_ino
