"""``ckit golden check``: the manifest parses, every artifact is the file it lists, and each
(sampled) program re-run with the reference runtime of its format gives the stored outputs.

1. the manifest parses: a regular file within its limit, strict JSON, the exact shape
2. every listed file is a regular file under the directory with its sha256 and size, and
   nothing under ``golden/`` is left unlisted
3. each sampled entry's program is one self-contained file (``kit.golden.self_contained``: an
   ONNX program naming external data is refused, never run: it would read the auditor's files)
   and, loaded from the checked bytes into the reference runtime, run on the stored inputs,
   gives the stored outputs within its flow's criterion (``kit.golden_check.criteria``)

An entry with a changed file is never re-run: those bytes are not what the run signed.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, TypedDict

from kit.bounded_read import FileMissing, path_within, read_regular_file
from kit.errors import InputError, KitError
from kit.golden.manifest import Manifest, ManifestEntry, ManifestFile, load_manifest
from kit.golden.runtimes import load_program
from kit.golden.self_contained import outside_references
from kit.golden.tensors import tensor_from
from kit.golden_check.criteria import criterion_of, mismatch
from kit.hashing import sha256_bytes
from kit.printable import printable
from kit.rundir import MAX_FILE_BYTES, RunDir

if TYPE_CHECKING:
    import torch

class EntryVerdictJson(TypedDict):
    flow: str
    test_id: str
    rerun: bool
    passed: bool
    why: str


class GoldenCheckJson(TypedDict):
    """``ckit golden check --json``."""

    passed: bool
    unwritten: int
    entries: list[EntryVerdictJson]
    unlisted: list[str]
    summary: str


@dataclass(frozen=True)
class EntryVerdict:
    flow: str
    test_id: str
    #: Whether the program was re-run (False: only its files were checked).
    rerun: bool
    #: Why the entry failed, one line; "" when it passed.
    why: str = ""

    @property
    def passed(self) -> bool:
        return not self.why

    def line(self) -> str:
        mark = "ok" if self.passed else "FAIL"
        how = "re-run" if self.rerun else "files"
        tail = f": {self.why}" if self.why else ""
        return printable(f"{mark} {self.flow} {self.test_id} ({how}){tail}")

    def to_json(self) -> EntryVerdictJson:
        return {"flow": self.flow, "test_id": self.test_id, "rerun": self.rerun,
                "passed": self.passed, "why": self.why}


@dataclass(frozen=True)
class GoldenCheck:
    manifest: Manifest
    verdicts: tuple[EntryVerdict, ...]
    #: Files under ``golden/`` the manifest does not list, relative to the directory.
    unlisted: tuple[str, ...]

    @property
    def failures(self) -> tuple[EntryVerdict, ...]:
        return tuple(v for v in self.verdicts if not v.passed)

    @property
    def passed(self) -> bool:
        return not self.failures and not self.unlisted

    def problem_lines(self) -> list[str]:
        unlisted = [printable(f"FAIL {path}: not listed in the manifest") for path in self.unlisted]
        return [v.line() for v in self.failures] + unlisted

    def summary(self) -> str:
        rerun = sum(v.rerun for v in self.verdicts)
        verdict = "PASSED" if self.passed else "FAILED"
        return (f"golden check {verdict}: {len(self.verdicts)} entries, {rerun} re-run, "
                f"{len(self.failures)} failed, {len(self.unlisted)} unlisted file(s); "
                f"the run could not write {self.manifest.unwritten} artifact(s)")

    def to_json(self) -> GoldenCheckJson:
        return {"passed": self.passed, "unwritten": self.manifest.unwritten,
                "entries": [v.to_json() for v in self.verdicts],
                "unlisted": list(self.unlisted), "summary": self.summary()}


def sample_entries(entries: Sequence[ManifestEntry], count: int | None, seed: str
                   ) -> frozenset[tuple[str, str]]:
    """The ``(flow, test id)`` of ``count`` entries drawn with ``seed`` (all when None): the
    same manifest and seed draw the same entries on any machine."""
    keys = sorted((entry.flow, entry.test_id) for entry in entries)
    if count is None or count >= len(keys):
        return frozenset(keys)
    return frozenset(random.Random(seed).sample(keys, count))


class _Changed(Exception):
    """A listed file is not the file the manifest lists (the message says how)."""


def _read_listed(directory: Path, listed: ManifestFile) -> bytes:
    what = "golden artifact"
    try:
        path = path_within(directory, listed.path, what)
        if (directory / listed.path).is_symlink():
            raise _Changed(f"{listed.path} is a symlink")
        data = read_regular_file(path, limit=MAX_FILE_BYTES, what=what)
    except FileMissing:
        raise _Changed(f"{listed.path} is missing") from None
    except InputError as exc:
        raise _Changed(str(exc)) from None
    if len(data) != listed.size or sha256_bytes(data) != listed.sha256:
        raise _Changed(f"{listed.path} changed after the run (its sha256 is not the manifest's)")
    return data


def _tensors(files: dict[str, bytes], pairs: list[tuple[str, str]]) -> list[torch.Tensor]:
    tensors = []
    for data_path, sidecar_path in pairs:
        try:
            sidecar = json.loads(files[sidecar_path])
            tensors.append(tensor_from(files[data_path], sidecar))
        except ValueError as exc:
            raise _Changed(f"{data_path}: {exc}") from None
    return tensors


def _tensor(value: Any) -> torch.Tensor:
    """A runtime's output as a tensor (a runtime may hand back arrays or scalars)."""
    import torch

    if isinstance(value, torch.Tensor):
        return value
    return torch.from_numpy(value) if hasattr(value, "dtype") else torch.tensor(value)


def _rerun(entry: ManifestEntry, files: dict[str, bytes]) -> str:
    """Why the re-run does not reproduce the stored outputs, or ""."""
    inputs = _tensors(files, entry.tensor_files("inputs"))
    expected = _tensors(files, entry.tensor_files("outputs"))
    assert entry.program is not None and entry.program_path is not None
    program = files[entry.program_path]
    outside = outside_references(entry.program, program)
    if outside:  # never handed to a runtime: it would read the auditor's files
        return (f"the program names data outside itself ({', '.join(outside)}): a golden program "
                "is one self-contained file; export it with its data inside")
    try:
        actual = load_program(entry.program, program)(inputs)
    except KitError:
        raise  # the reference runtime is not installed: no verdict on any entry
    except Exception as exc:  # noqa: BLE001 - whatever the runtime raises is the verdict
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        return f"the reference runtime ({entry.program}) cannot run the program: {first}"
    outputs = [_tensor(value) for value in actual]
    return mismatch(outputs, expected, criterion_of(entry.flow, entry.test_id)) or ""


def _check_entry(directory: Path, entry: ManifestEntry, rerun: bool) -> EntryVerdict:
    try:
        files = {listed.path: _read_listed(directory, listed) for listed in entry.files}
    except _Changed as exc:
        return EntryVerdict(entry.flow, entry.test_id, False, str(exc))  # never re-run
    if not rerun or entry.program is None:
        return EntryVerdict(entry.flow, entry.test_id, False)
    try:
        why = _rerun(entry, files)
    except _Changed as exc:
        why = str(exc)
    return EntryVerdict(entry.flow, entry.test_id, True, why)


def unlisted_files(directory: Path, manifest: Manifest) -> tuple[str, ...]:
    """Everything under ``golden/`` that is not a directory the manifest's files sit in."""
    listed = manifest.listed_paths()
    found = []
    for parent, dirs, names in os.walk(RunDir(directory).golden):  # links are never followed
        links = [d for d in dirs if Path(parent, d).is_symlink()]
        for name in sorted(names + links):
            relative = PurePosixPath(Path(parent, name).relative_to(directory).as_posix())
            if str(relative) not in listed:
                found.append(str(relative))
    return tuple(sorted(found))


def check_golden(directory: Path, sample: int | None = None, seed: str = "0") -> GoldenCheck:
    """Check ``directory`` (a run's output directory or a submission); re-run ``sample``
    entries drawn with ``seed`` (None: every entry). A manifest that does not parse raises."""
    manifest, _ = load_manifest(directory)
    chosen = sample_entries(manifest.entries, sample, seed)
    verdicts = tuple(
        _check_entry(directory, entry, (entry.flow, entry.test_id) in chosen)
        for entry in manifest.entries
    )
    return GoldenCheck(manifest, verdicts, unlisted_files(directory, manifest))
