"""Serialized programs kept between runs, so a re-run neither re-lowers nor re-quantizes.

An entry is keyed by (test id, flow name, options, kit digest): any edit of the kit or the
standard starts afresh. It is two files, ``<key>.program`` and ``<key>.json`` (the ``Lowered``
metadata, the key's parts and the program's sha256). An entry that does not match its key, is
not a regular file, or whose bytes do not hash to the recorded sha256 is ignored (and rewritten
by the next ``put``): the cache is never trusted blindly.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, TypedDict

from kit.bounded_read import read_regular_file
from kit.errors import InputError
from kit.flows.interface import FlowOptions, Lowered
from kit.hashing import kit_digest, sha256_bytes

#: The largest program the cache keeps or reads back.
PROGRAM_LIMIT_BYTES = 1 << 30
_META_LIMIT_BYTES = 1 << 20


def default_cache_root() -> Path:
    """``$XDG_CACHE_HOME/ckit/programs`` (``~/.cache`` when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ckit" / "programs"


class CacheKey(TypedDict):
    """What a cached program is keyed by, and its metadata file repeats."""

    test_id: str
    flow: str
    #: The vendor's flow options as canonical JSON reads them back.
    options: object
    kit_digest: str


class ProgramCache:
    """Programs on disk under ``root`` for one kit digest."""

    def __init__(self, root: Path, kit_digest: str) -> None:
        self.root = root
        self.kit_digest = kit_digest

    @classmethod
    def default(cls) -> ProgramCache:
        """The user's cache, for this kit's digest."""
        return cls(default_cache_root(), kit_digest())

    def key_parts(self, test_id: str, flow: str, options: FlowOptions) -> CacheKey:
        return {
            "test_id": test_id,
            "flow": flow,
            "options": json.loads(_canonical(options)),
            "kit_digest": self.kit_digest,
        }

    def key(self, test_id: str, flow: str, options: FlowOptions) -> str:
        return sha256_bytes(_canonical(self.key_parts(test_id, flow, options)).encode("utf-8"))

    def get(self, test_id: str, flow: str, options: FlowOptions) -> Lowered | None:
        """The cached program, or None when there is none or it cannot be trusted."""
        key = self.key(test_id, flow, options)
        try:
            meta = json.loads(read_regular_file(self._path(key, "json"), limit=_META_LIMIT_BYTES,
                                                what="cached program metadata"))
            data = read_regular_file(self._path(key, "program"), limit=PROGRAM_LIMIT_BYTES,
                                     what="cached program")
        except (InputError, ValueError):
            return None
        return _lowered(meta, data, self.key_parts(test_id, flow, options))

    def put(self, test_id: str, flow: str, options: FlowOptions, program: Lowered) -> None:
        """Keep ``program``; each file is replaced whole, so a reader never sees half of one."""
        key = self.key(test_id, flow, options)
        meta = {
            **self.key_parts(test_id, flow, options),
            "sha256": sha256_bytes(program.data),
            "format": program.format,
            "delegated_ops": program.delegated_ops,
            "undelegated_ops": dict(program.undelegated_ops),
        }
        self.root.mkdir(parents=True, exist_ok=True)
        _write_atomic(self._path(key, "program"), program.data)
        _write_atomic(self._path(key, "json"), _canonical(meta).encode("utf-8"))

    def _path(self, key: str, suffix: str) -> Path:
        return self.root / f"{key}.{suffix}"


def _lowered(meta: Any, data: bytes, expected: CacheKey) -> Lowered | None:
    if not isinstance(meta, dict) or any(meta.get(k) != v for k, v in expected.items()):
        return None
    if meta.get("sha256") != sha256_bytes(data):
        return None
    fmt, delegated = meta.get("format"), meta.get("delegated_ops")
    undelegated = _op_counts(meta.get("undelegated_ops"))
    if not isinstance(fmt, str) or type(delegated) is not int or undelegated is None:
        return None
    return Lowered(data, fmt, delegated, undelegated)


def _op_counts(value: Any) -> dict[str, int] | None:
    if isinstance(value, dict) and all(
        isinstance(k, str) and type(v) is int for k, v in value.items()
    ):
        return dict(value)
    return None


def _canonical(value: Any) -> str:
    # Options are YAML scalars and containers; anything else keys by its repr.
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr)


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
