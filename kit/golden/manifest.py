"""``golden-manifest.json``: every golden artifact file with its sha256 and size, by entry.

Written when the run finishes, before signing: its digest is a subject of the signed statement,
so the artifacts are as signed as the report. Read back strictly and bounded, since a manifest
comes from whoever handed over the directory.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, TypedDict

import kit
from kit.bounded_read import read_regular_file
from kit.errors import VerificationError
from kit.golden.names import INPUTS, OUTPUTS, PROGRAM_NAMES, STAGING, entry_path
from kit.hashing import kit_digest, sha256_file
from kit.json_shape import exact_object
from kit.outfiles import write_new_file
from kit.printable import printable
from kit.rundir import GOLDEN_MANIFEST, GOLDEN_UNWRITTEN_LOG, RunDir
from kit.strict_json import loads_strict

FORMAT = "ckit-golden-manifest/v1"
#: The manifest of a full run lists a few files per flow test: far below this.
MAX_MANIFEST_BYTES = 64 << 20
_FIELDS = frozenset({"format", "kit", "unwritten", "entries"})
_KIT_FIELDS = frozenset({"version", "digest"})
_ENTRY_FIELDS = frozenset({"flow", "test_id", "program", "files"})
_FILE_FIELDS = frozenset({"path", "sha256", "size"})
_SHA256 = re.compile(r"[0-9a-f]{64}")
_TENSOR_FILE = re.compile(r"(0|[1-9][0-9]{0,5})\.(bin|json)")
_FORMAT_OF = {name: fmt for fmt, name in PROGRAM_NAMES.items()}


class ManifestFileJson(TypedDict):
    path: str
    sha256: str
    size: int


class ManifestEntryJson(TypedDict):
    flow: str
    test_id: str
    program: str | None
    files: list[ManifestFileJson]


class KitJson(TypedDict):
    version: str
    digest: str


class ManifestJson(TypedDict):
    """``golden-manifest.json`` as written (``_FIELDS``)."""

    format: str
    kit: KitJson
    unwritten: int
    entries: list[ManifestEntryJson]


@dataclass(frozen=True)
class ManifestFile:
    #: Relative to the run (or submission) directory, ``/``-separated.
    path: str
    sha256: str
    size: int

    def to_json(self) -> ManifestFileJson:
        return {"path": self.path, "sha256": self.sha256, "size": self.size}


@dataclass(frozen=True)
class ManifestEntry:
    flow: str
    test_id: str
    #: ``pte`` or ``onnx``: the reference runtime that re-runs the program; None: no program.
    program: str | None
    files: tuple[ManifestFile, ...]

    @property
    def directory(self) -> PurePosixPath:
        return entry_path(self.flow, self.test_id)

    def tensor_files(self, kind: str) -> list[tuple[str, str]]:
        """The ``(data, sidecar)`` paths of ``inputs`` or ``outputs``, in order."""
        count = sum(1 for f in self.files if PurePosixPath(f.path).parent.name == kind) // 2
        base = self.directory / kind
        return [(str(base / f"{i}.bin"), str(base / f"{i}.json")) for i in range(count)]

    @property
    def program_path(self) -> str | None:
        return None if self.program is None else str(self.directory / PROGRAM_NAMES[self.program])

    def to_json(self) -> ManifestEntryJson:
        return {"flow": self.flow, "test_id": self.test_id, "program": self.program,
                "files": [f.to_json() for f in self.files]}


@dataclass(frozen=True)
class Manifest:
    kit_version: str
    kit_digest: str
    #: Artifacts the run could not write (each was a warning during the run).
    unwritten: int
    entries: tuple[ManifestEntry, ...]

    def listed_paths(self) -> frozenset[str]:
        return frozenset(f.path for entry in self.entries for f in entry.files)

    def to_json(self) -> ManifestJson:
        return {"format": FORMAT, "kit": {"version": self.kit_version, "digest": self.kit_digest},
                "unwritten": self.unwritten, "entries": [e.to_json() for e in self.entries]}


# -- writing (the run) ------------------------------------------------------------------------


def _entry_of(relative: PurePosixPath) -> tuple[PurePosixPath, str | None] | None:
    """The entry directory a file belongs to and the program format it is, or None (stray)."""
    parts = relative.parts
    if len(parts) >= 3 and parts[-2] in (INPUTS, OUTPUTS) and _TENSOR_FILE.fullmatch(parts[-1]):
        return PurePosixPath(*parts[:-2]), None
    if len(parts) >= 2 and parts[-1] in _FORMAT_OF:
        return PurePosixPath(*parts[:-1]), _FORMAT_OF[parts[-1]]
    return None


def _files_under(root: Path) -> Iterator[Path]:
    for directory, _, names in os.walk(root):  # links are never followed
        for name in sorted(names):
            yield Path(directory, name)


def scan_entries(out_dir: Path) -> tuple[ManifestEntry, ...]:
    """Every complete entry under ``out_dir/golden``, each file hashed; strays are warned of."""
    grouped: dict[PurePosixPath, tuple[list[ManifestFile], list[str]]] = {}
    for path in _files_under(RunDir(out_dir).golden):
        relative = PurePosixPath(path.relative_to(out_dir).as_posix())
        found = _entry_of(PurePosixPath(*relative.parts[1:]))
        if found is None or path.is_symlink() or not path.is_file():
            print(f"ckit: warning: {printable(str(relative))} is no golden artifact; not listed",
                  file=sys.stderr)
            continue
        files, formats = grouped.setdefault(found[0], ([], []))
        files.append(ManifestFile(str(relative), sha256_file(path), path.stat().st_size))
        formats += [found[1]] if found[1] else []
    return tuple(_entry(directory, *grouped[directory]) for directory in sorted(grouped))


def _entry(directory: PurePosixPath, files: list[ManifestFile], formats: list[str]
           ) -> ManifestEntry:
    flow, *test_path = directory.parts
    return ManifestEntry(flow, "/".join(test_path), formats[0] if len(formats) == 1 else None,
                         tuple(sorted(files, key=lambda f: f.path)))


def unwritten_count(log_dir: Path) -> int:
    try:
        return len((log_dir / GOLDEN_UNWRITTEN_LOG).read_text(encoding="utf-8").splitlines())
    except OSError:
        return 0


def write_manifest(out_dir: Path, log_dir: Path) -> Manifest:
    """List what the run's judges wrote (dropping half-staged entries) as the manifest."""
    shutil.rmtree(RunDir(out_dir).golden / STAGING, ignore_errors=True)
    manifest = Manifest(kit.__version__, kit_digest(), unwritten_count(log_dir),
                        scan_entries(out_dir))
    target = RunDir(out_dir).golden_manifest
    if target.exists() and not target.is_symlink():
        target.unlink()  # a resumed run lists its artifacts again, before anything is signed
    import json

    text = json.dumps(manifest.to_json(), indent=1, sort_keys=True, ensure_ascii=True) + "\n"
    write_new_file(target, text.encode("utf-8"))
    return manifest


# -- reading (the check) ----------------------------------------------------------------------


def _fail(where: str, message: str) -> VerificationError:
    return VerificationError(f"{GOLDEN_MANIFEST}: {where}: {printable(message)}")


def _parse_file(value: Any, where: str, directory: PurePosixPath) -> ManifestFile:
    fields = exact_object(value, _FILE_FIELDS, where)
    path, sha256, size = fields["path"], fields["sha256"], fields["size"]
    if not isinstance(path, str) or PurePosixPath(path).parent not in (
        directory, directory / INPUTS, directory / OUTPUTS
    ) or str(PurePosixPath(path)) != path:
        raise _fail(where, f"path {str(path)[:200]!r} is not a file of entry {directory}")
    if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256):
        raise _fail(where, "sha256 must be 64 lower-case hex digits")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise _fail(where, "size must be a non-negative integer")
    return ManifestFile(path, sha256, size)


def _expected_names(files: tuple[ManifestFile, ...], program: str | None,
                    directory: PurePosixPath) -> set[str]:
    """The files an entry must list: every index below its counts, both halves, the program."""
    names = {PurePosixPath(f.path).relative_to(directory).as_posix() for f in files}
    expected = {PROGRAM_NAMES[program]} if program else set()
    for kind in (INPUTS, OUTPUTS):
        count = sum(1 for n in names if n.startswith(f"{kind}/") and n.endswith(".bin"))
        expected |= {f"{kind}/{i}.{ext}" for i in range(count) for ext in ("bin", "json")}
    if names != expected:
        odd = sorted(names ^ expected)[0]
        raise ValueError(f"file {odd} is {'missing' if odd in expected else 'not expected'}")
    return names


def _parse_entry(value: Any, index: int) -> ManifestEntry:
    where = f"entries[{index}]"
    fields = exact_object(value, _ENTRY_FIELDS, where)
    flow, test_id, program = fields["flow"], fields["test_id"], fields["program"]
    if not isinstance(flow, str) or not isinstance(test_id, str):
        raise _fail(where, "flow and test_id must be strings")
    if program is not None and program not in PROGRAM_NAMES:
        raise _fail(where, f"program {str(program)[:40]!r} is not one of {sorted(PROGRAM_NAMES)}")
    try:
        directory = entry_path(flow, test_id)
    except ValueError as exc:
        raise _fail(where, f"test {test_id[:200]!r}: {exc}") from None
    raw = fields["files"]
    if not isinstance(raw, list):
        raise _fail(where, "files must be a list")
    files = tuple(_parse_file(f, f"{where} files[{i}]", directory) for i, f in enumerate(raw))
    try:
        _expected_names(files, program, directory)
    except ValueError as exc:
        raise _fail(where, str(exc)) from None
    return ManifestEntry(flow, test_id, program, files)


def _refuse_duplicates(entries: tuple[ManifestEntry, ...]) -> None:
    seen: set[str] = set()
    for entry in entries:
        for file in entry.files:
            if file.path in seen:
                raise _fail("entries", f"{file.path} is listed twice")
            seen.add(file.path)


def parse_manifest(document: Any) -> Manifest:
    fields = exact_object(document, _FIELDS, "manifest")
    if fields["format"] != FORMAT:
        raise _fail("format", f"{str(fields['format'])[:60]!r} is not {FORMAT}")
    kit_fields: Mapping[str, Any] = exact_object(fields["kit"], _KIT_FIELDS, "manifest kit")
    if not all(isinstance(kit_fields[k], str) for k in _KIT_FIELDS):
        raise _fail("kit", "version and digest must be strings")
    unwritten, raw = fields["unwritten"], fields["entries"]
    if not isinstance(unwritten, int) or isinstance(unwritten, bool) or unwritten < 0:
        raise _fail("unwritten", "must be a non-negative integer")
    if not isinstance(raw, list):
        raise _fail("entries", "must be a list")
    entries = tuple(_parse_entry(value, i) for i, value in enumerate(raw))
    _refuse_duplicates(entries)
    return Manifest(kit_fields["version"], kit_fields["digest"], unwritten, entries)


def load_manifest(directory: Path) -> tuple[Manifest, bytes]:
    """The manifest of a run or submission directory and its exact bytes."""
    path = RunDir(directory).golden_manifest
    data = read_regular_file(path, limit=MAX_MANIFEST_BYTES, what="golden manifest")
    try:
        return parse_manifest(loads_strict(data, what=GOLDEN_MANIFEST)), data
    except VerificationError as exc:
        message = str(exc)
        raise VerificationError(
            message if message.startswith(GOLDEN_MANIFEST) else f"{GOLDEN_MANIFEST}: {message}"
        ) from None
