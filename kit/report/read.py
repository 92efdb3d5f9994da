"""Reading a finished run's report, report.json or a body, for ``ckit show``, ``ckit diff``,
``--rerun-failed``, ``ckit run --in-container`` and ``ckit slurm status``.

The file is someone else's until proven otherwise: it is read with a size bound (regular files
only), parsed as strict JSON (no duplicate keys, no NaN) and typed by ``Report.from_json``, so
every problem is one line and no consumer re-checks shapes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kit.bounded_read import FileMissing, read_regular_file
from kit.errors import InputError, VerificationError
from kit.hashing import sha256_bytes
from kit.report.body import Body, WrittenBody, decode_body
from kit.report.model import Report, ReportError
from kit.rundir import BODY_FILES, MAX_SUBJECT_BYTES, REPORT_HEAD, REPORT_JSON, RunDir
from kit.strict_json import loads_strict


@dataclass(frozen=True)
class LoadedReport:
    #: The report.json that was read.
    path: Path
    #: sha256 of its bytes: names exactly this report (``--rerun-failed`` records it).
    sha256: str
    report: Report


def report_path(target: Path) -> Path:
    """A run directory names its report.json; anything else is taken as the file itself."""
    return RunDir(target).report_json if target.is_dir() else target


def _body_files(directory: Path) -> dict[str, bytes]:
    files = {}
    for name in BODY_FILES:
        try:
            files[name] = read_regular_file(directory / name, limit=MAX_SUBJECT_BYTES,
                                            what="report body")
        except FileMissing:
            raise InputError(f"{directory}: {name} is missing from the report body") from None
    return files


def read_body(directory: Path) -> WrittenBody:
    """A ``body``-format run's body (``kit.report.body``), read as strictly as verify reads it;
    ``InputError`` in one line otherwise."""
    try:
        return decode_body(_body_files(directory))
    except VerificationError as exc:
        raise InputError(f"{directory}: not a report this kit can read: {exc}") from None


def _read_body(directory: Path) -> LoadedReport:
    """A ``body``-format run's report typed; its sha256 is the records' and the head's together
    (each file's digest, in order)."""
    files = _body_files(directory)
    try:
        body = decode_body(files)
        if not isinstance(body, Body):
            raise VerificationError(body.unknown_status() or "a record's status is unknown")
        report = Report.from_body(body.head, body.records, body.report_document())
    except VerificationError as exc:
        raise InputError(f"{directory}: not a report this kit can read: {exc}") from None
    return LoadedReport(path=directory / REPORT_HEAD, sha256=body_sha256(files), report=report)


def body_sha256(files: Mapping[str, bytes]) -> str:
    """What names exactly one body (as a report.json's sha256 names it): the sha256 of its
    files' digests in ``BODY_FILES`` order. ``--rerun-failed`` and ``ckit merge`` record it."""
    return sha256_bytes("".join(sha256_bytes(files[n]) for n in BODY_FILES).encode())


def read_report(target: Path) -> LoadedReport:
    """The report at ``target`` (a run directory, a report.json, or a body's head);
    ``KitError`` if unreadable."""
    if target.is_dir() and RunDir(target).holds_body():
        return _read_body(target)
    if target.name == REPORT_HEAD:
        return _read_body(target.parent)
    path = report_path(target)
    try:
        data = read_regular_file(path, limit=MAX_SUBJECT_BYTES, what="report")
    except FileMissing:
        raise InputError(f"{path}: not found; give a run directory or its {REPORT_JSON}") from None
    document = loads_strict(data, what=str(path), error=InputError)
    try:
        report = Report.from_json(document)
    except ReportError as exc:
        raise InputError(f"{path}: not a report this kit can read: {exc}") from None
    return LoadedReport(path=path, sha256=sha256_bytes(data), report=report)
