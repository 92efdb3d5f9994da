"""The verdicts of the content checks of ``body``-format reports, one file per signed payload.

The content checks (``kit.verification.body_content``) read a whole body; the integrity steps
(envelope, signature, key standing, digests) read a few hundred bytes and hash the body. So the
verdict is recorded once per signed payload, at ``ckit submit`` and when an audit first takes
a report, and an audit of a repository reads it back instead of checking again.

A record cannot let a tampered body pass: it is looked up only after the signature verified
over the payload and every body file hashed to the digest the payload names, and its key is
that payload's sha256. Whatever body bytes match those digests are the bytes that were checked.
The key also holds what the verdict depends on besides the body: the kit doing the checks (its
digest: another kit may check more) and the released-kit list it judged step 10 by. The
directory is the auditor's (``--content-cache``), never the audited repository: a record filed
by a submitter would be the submitter's word.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec

from kit.bounded_read import FileMissing, read_regular_file
from kit.errors import InputError
from kit.grading.released import ReleasedKit
from kit.hashing import kit_digest, sha256_bytes
from kit.signing.keys import write_atomically
from kit.verification.body_content import ContentVerdict

#: A record is a few hundred bytes; anything larger is not one.
_MAX_RECORD_BYTES = 64 << 10


class _Record(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    payload_sha256: str
    context: str
    passed: bool
    problem: str
    grade: str
    notes: tuple[str, ...]
    typed: bool
    checks: tuple[tuple[int, bool, str], ...]


@functools.cache
def _kit_digest() -> str:
    return kit_digest()  # hashes the kit's files: once a process


def verdict_context(released_kits: Sequence[ReleasedKit]) -> str:
    """What a verdict depends on besides the body: this kit, and the released kits it knew."""
    listed = "\n".join(sorted(f"{kit.version}\0{kit.digest}" for kit in released_kits))
    return sha256_bytes(f"{_kit_digest()}\n{listed}".encode())


@dataclass(frozen=True)
class ContentCache:
    """Verdicts under ``directory``: ``<context[:16]>/<payload sha256>.json``."""

    directory: Path

    def _path(self, payload_sha256: str, context: str) -> Path:
        return self.directory / context[:16] / f"{payload_sha256}.json"

    def get(self, payload_sha256: str, context: str) -> ContentVerdict | None:
        """The recorded verdict; None when there is none or it is not a record of this key."""
        try:
            data = read_regular_file(self._path(payload_sha256, context),
                                     limit=_MAX_RECORD_BYTES, what="content verdict")
            record = msgspec.json.decode(data, type=_Record)
        except (FileMissing, InputError, msgspec.DecodeError):
            return None  # unreadable: checked again, and written again
        if record.payload_sha256 != payload_sha256 or record.context != context:
            return None
        return ContentVerdict(record.passed, record.problem, record.grade, record.notes,
                              record.typed, record.checks)

    def put(self, payload_sha256: str, context: str, verdict: ContentVerdict) -> None:
        path = self._path(payload_sha256, context)
        path.parent.mkdir(parents=True, exist_ok=True)
        record = _Record(payload_sha256, context, verdict.passed, verdict.problem, verdict.grade,
                         verdict.notes, verdict.typed, verdict.checks)
        write_atomically(path, msgspec.json.encode(record), mode=0o644)
