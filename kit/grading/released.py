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

from kit.config_reader import Node
from kit.errors import InputError
from kit.hashing import released_kits_path

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
    document = Node.read(path).section(("released",), what="a mapping with the key released")
    entries = document["released"].items(what="a list of released kits")
    kits = tuple(_entry(entry) for entry in entries)
    _refuse_duplicates(path, kits)
    return kits


def _entry(node: Node) -> ReleasedKit:
    fields = node.section(FIELDS, what="a mapping of " + ", ".join(FIELDS))
    return ReleasedKit(
        version=fields["version"].text(expected="the kit version"),
        digest=fields["digest"].text(pattern=_SHA256, expected="64 lowercase hex digits"),
        date=fields["date"].date(),
    )


def _refuse_duplicates(path: Path, kits: tuple[ReleasedKit, ...]) -> None:
    seen: set[str] = set()
    for kit in kits:
        if kit.digest in seen:
            raise InputError(f"{path}: digest {kit.digest} is listed twice")
        seen.add(kit.digest)


def is_released(digest: str, kits: Iterable[ReleasedKit]) -> bool:
    return any(kit.digest == digest for kit in kits)
