"""Released kits: the digests of the kit versions that were released, shipped with the standards.

A report records whether the kit that judged it is one of them. Every development checkout is
unreleased; that does not change the grade, but its results are not comparable with those of a
released kit. The list (``standards/released-kits.yaml``) is not part of the kit digest, so a
release can add its own digest.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit.errors import InputError
from kit.hashing import released_kits_path
from kit.yamlio import load_yaml

_SHA256 = re.compile(r"[0-9a-f]{64}")
FIELDS = ("version", "digest", "date")


@dataclass(frozen=True)
class ReleasedKit:
    version: str
    #: The kit digest (``kit.hashing.kit_digest``) of the released checkout.
    digest: str
    date: dt.date


def load_released_kits(path: Path | None = None) -> tuple[ReleasedKit, ...]:
    """The released kits listed in ``path`` (default: the kit home's list).

    A kit home without the list (a partial copy) has released nothing: its reports say so.
    """
    path = path or released_kits_path()
    if not path.is_file():
        return ()
    data = load_yaml(path)
    entries = data.get("released") if isinstance(data, dict) else None
    if not isinstance(entries, list) or set(data) != {"released"}:
        raise InputError(f"{path}: expected one key, released, holding a list")
    kits = tuple(_entry(path, index, entry) for index, entry in enumerate(entries))
    _refuse_duplicates(path, kits)
    return kits


def _entry(path: Path, index: int, entry: Any) -> ReleasedKit:
    where = f"{path}: released.{index}"
    if not isinstance(entry, dict) or sorted(entry) != sorted(FIELDS):
        raise InputError(f"{where}: expected exactly the fields {', '.join(FIELDS)}")
    version, digest, date = (entry[key] for key in FIELDS)
    if not isinstance(version, str) or not version:
        raise InputError(f"{where}: field version: expected the kit version, got {version!r}")
    if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
        raise InputError(f"{where}: field digest: expected 64 lowercase hex digits")
    if not isinstance(date, dt.date) or isinstance(date, dt.datetime):
        raise InputError(f"{where}: field date: expected a date YYYY-MM-DD, got {date!r}")
    return ReleasedKit(version, digest, date)


def _refuse_duplicates(path: Path, kits: tuple[ReleasedKit, ...]) -> None:
    seen: set[str] = set()
    for kit in kits:
        if kit.digest in seen:
            raise InputError(f"{path}: digest {kit.digest} is listed twice")
        seen.add(kit.digest)


def is_released(digest: str, kits: Iterable[ReleasedKit]) -> bool:
    return any(kit.digest == digest for kit in kits)
