"""The ``body`` report format (a standard's ``report_format: body``): what a run signs.

Two files, ``kit.rundir.BODY_FILES``, the only signed subjects besides the golden manifest:

- ``report.head.json``: the report document without its records (kit, standard, vendor, run,
  environment, skip manifest, summary, policy, grade): a few KB, so a reader of the summary
  never decodes the records;
- ``records.jsonl``: one record per line, in the report's order (sorted by id). The records
  are 99.9 % of a report's bytes; one line each lets a run stream them, a reader take one
  without the rest, and a verifier decode them typed (``BodyRecord``) in one pass.

Both are canonical: msgspec's encoding with keys sorted, no spaces, UTF-8, every line ended by
a newline. A reader decodes and encodes again and takes the body only when the bytes are the
same: a duplicate key, a second spelling of a number or a string, whitespace or a field outside
the record's type cannot survive that, so what the digest covers means one thing to every
parser. junit.xml, results.csv and summary.md are no longer signed claims: they are rendered
on demand from the body (``kit.formats.derived.body_derived``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import msgspec

from kit.errors import InputError, VerificationError
from kit.outfiles import write_new_file
from kit.results import Status, TestRecord
from kit.rundir import BODY_FILES, RECORDS_JSONL, REPORT_HEAD, finished_report_names

__all__ = ["Body", "BodyDocument", "BodyRecord", "RecordLine", "WrittenBody", "decode_body",
           "decode_head", "encode_body", "encode_head", "write_body_files"]

#: The report's key whose value ``records.jsonl`` holds; the head holds every other key.
RECORDS_KEY = "records"


class RecordLine(msgspec.Struct, forbid_unknown_fields=True, frozen=True, gc=False):
    """One line of ``records.jsonl``, its status as written: exactly a report record's fields
    (its schema's).

    Not tracked by the cyclic collector (``gc=False``): a record read from JSON holds no cycle,
    and a whole run's records are tens of thousands of objects for it to walk again and again.
    """

    id: str
    tier: str
    status: str
    duration_s: Annotated[float, msgspec.Meta(ge=0)]
    message: str
    details: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "tier": self.tier, "status": str(self.status),
                "duration_s": self.duration_s, "message": self.message, "details": self.details}


class BodyRecord(RecordLine, frozen=True):
    """A line of ``records.jsonl`` whose status is one of the kit's (``Status``, decoded in C):
    what grading reads (``kit.results.RecordFields``), with no typed copy of a whole run; a
    ``TestRecord`` is made only where a reader asks for one (``to_record``)."""

    status: Status

    def to_record(self) -> TestRecord:
        """The record as a ``TestRecord``, made as msgspec makes a dataclass it decodes: its
        fields set at once, not through the frozen ``__init__`` (an ``object.__setattr__`` call
        per field); by that ``__init__`` where ``TestRecord`` would not be the same made so."""
        if not _FIELDS_SET_AT_ONCE:
            return TestRecord(self.id, self.status, self.duration_s, self.message, self.details)
        typed = _new_object(TestRecord)
        _set_attribute(typed, "__dict__", {
            "id": self.id, "status": self.status, "duration_s": self.duration_s,
            "message": self.message, "details": self.details})
        return typed


_new_object, _set_attribute = object.__new__, object.__setattr__
#: Whether ``BodyRecord.to_record`` may set a ``TestRecord``'s fields at once: the ones it sets
#: are all there are, and nothing runs or is kept beyond them.
_FIELDS_SET_AT_ONCE = (
    tuple(field.name for field in dataclasses.fields(TestRecord))
    == ("id", "status", "duration_s", "message", "details")
    and not hasattr(TestRecord, "__post_init__") and not hasattr(TestRecord, "__slots__")
)


# One encoder for writer and reader: the canonical form is whatever it writes.
_ENCODER = msgspec.json.Encoder(order="sorted")
_HEAD_DECODER = msgspec.json.Decoder(dict[str, Any])
_RECORDS_DECODER = msgspec.json.Decoder(BodyRecord)
_LINES_DECODER = msgspec.json.Decoder(RecordLine)


@dataclass(frozen=True)
class WrittenBody:
    """A body read strictly, its records' statuses as written: a ``Body`` where each is one of
    the kit's (``decode_body``)."""

    head: Mapping[str, Any]
    records: tuple[RecordLine, ...]

    def document(self) -> dict[str, Any]:
        """The report document the head and records make (what report.json would hold)."""
        return {**self.head, RECORDS_KEY: self.record_documents()}

    def record_documents(self) -> list[dict[str, Any]]:
        return [record.to_json() for record in self.records]

    def report_document(self) -> Mapping[str, Any]:
        """``document()`` as a read-only mapping whose records are made on first read: a
        verifier reads the typed records, and a whole run's record documents would be built
        for no one."""
        return BodyDocument(self.head, self.records)

    def unknown_status(self) -> str | None:
        """The first record whose status is not one of the kit's, in words; None for a
        ``Body``."""
        first = next((r for r in self.records if r.status not in _STATUS_VALUES), None)
        return None if first is None else \
            f"record {first.id[:80]!r}: unknown status {first.status[:40]!r}"


@dataclass(frozen=True)
class Body(WrittenBody):
    """A body read strictly, each record's status one of the kit's (``BodyRecord``)."""

    records: tuple[BodyRecord, ...]


class BodyDocument(Mapping[str, Any]):
    """The report document of a body (``Body.document``), its records' documents made when
    ``records`` is first read, then kept."""

    def __init__(self, head: Mapping[str, Any], records: Sequence[RecordLine]) -> None:
        self._head = head
        self._records = records
        self._record_documents: list[dict[str, Any]] | None = None

    def __getitem__(self, key: str) -> Any:
        if key != RECORDS_KEY:
            return self._head[key]
        if self._record_documents is None:
            self._record_documents = [record.to_json() for record in self._records]
        return self._record_documents

    def __iter__(self) -> Iterator[str]:
        yield from self._head
        yield RECORDS_KEY

    def __len__(self) -> int:
        return len(self._head) + 1


def _record(data: Mapping[str, Any]) -> RecordLine:
    # A record's duration may be built as an int: the body writes every duration as a float,
    # so that decoding it typed and encoding it again gives the same bytes.
    return RecordLine(id=data["id"], tier=data["tier"], status=data["status"],
                      duration_s=float(data["duration_s"]), message=data["message"],
                      details=dict(data["details"]))


def encode_body(report: Mapping[str, Any]) -> dict[str, bytes]:
    """File name -> canonical bytes of the body of ``report`` (a built report document)."""
    head = {key: value for key, value in report.items() if key != RECORDS_KEY}
    records = [_record(item) for item in report[RECORDS_KEY]]
    try:
        encoded = {REPORT_HEAD: encode_head(head), RECORDS_JSONL: _ENCODER.encode_lines(records)}
    except (TypeError, ValueError, msgspec.EncodeError) as exc:
        raise InputError(f"report body cannot be encoded: {exc}") from None
    _refuse_unreadable(encoded)
    return encoded


def encode_head(head: Mapping[str, Any]) -> bytes:
    """The canonical bytes of a body's head (the report less its records)."""
    return _ENCODER.encode(head) + b"\n"


def _refuse_unreadable(encoded: Mapping[str, bytes]) -> None:
    """What would not read back is never written (a non-finite float encodes as null)."""
    try:
        decode_body(encoded)  # a status is the verifier's to refuse (step 9)
    except VerificationError as exc:
        raise InputError(f"report body would not verify: {exc}") from None


def _first_line_apart(found: bytes, canonical: bytes) -> int:
    pairs = zip(found.split(b"\n"), canonical.split(b"\n"), strict=False)
    return next((n for n, (a, b) in enumerate(pairs, start=1) if a != b), 1)


def decode_head(data: bytes) -> dict[str, Any]:
    """The head alone, read strictly (a reader of the claims, not of the records)."""
    try:
        head = _HEAD_DECODER.decode(data)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise VerificationError(f"{REPORT_HEAD}: {_one_line(exc)}") from None
    if RECORDS_KEY in head:
        raise VerificationError(f"{REPORT_HEAD}: holds records; they belong in {RECORDS_JSONL}")
    if encode_head(head) != data:
        raise VerificationError(f"{REPORT_HEAD}: not canonical JSON (a duplicate key, another "
                                "spelling of a value, or whitespace); the kit writes one form")
    return head


def _read_records(head: dict[str, Any], data: bytes) -> WrittenBody:
    """The body of ``head`` and the records of ``data``, strictly: a ``Body``, or as written
    where the records read but for a record's status."""
    if data and not data.endswith(b"\n"):
        raise VerificationError(f"{RECORDS_JSONL}: the last line has no newline")
    try:
        records = _RECORDS_DECODER.decode_lines(data)
    except (msgspec.DecodeError, RecursionError):
        lines = _record_lines(data)  # the decode error, where a status is not what failed
        _check_canonical(lines, data)
        return WrittenBody(head, tuple(lines))
    _check_canonical(records, data)
    return Body(head, tuple(records))


def _record_lines(data: bytes) -> list[RecordLine]:
    try:
        return _LINES_DECODER.decode_lines(data)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise VerificationError(f"{RECORDS_JSONL}: {_one_line(exc)}") from None


def _check_canonical(records: Sequence[RecordLine], data: bytes) -> None:
    canonical = _ENCODER.encode_lines(records)
    if canonical != data:
        line = _first_line_apart(data, canonical)
        raise VerificationError(f"{RECORDS_JSONL} line {line}: not canonical JSON (a duplicate "
                                "key, another spelling of a value, or whitespace)")


def _one_line(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]


def decode_body(files: Mapping[str, bytes]) -> WrittenBody:
    """The body of ``files`` (name -> bytes, as their digests were checked), read strictly:
    a ``Body`` where every record's status is one of the kit's, else as written (the reader's
    to refuse: the verifier's step 9 names the first record it refuses);
    ``VerificationError`` naming the file (and line) otherwise."""
    missing = [name for name in BODY_FILES if name not in files]
    if missing:
        raise VerificationError(f"the body lacks {missing[0]}")
    return _read_records(decode_head(files[REPORT_HEAD]), files[RECORDS_JSONL])


_STATUS_VALUES = frozenset(status.value for status in Status)


def write_body_files(report: Mapping[str, Any], out_dir: Path) -> dict[str, Path]:
    """Write the body of ``report``; nothing when any report file of either format or an
    envelope is there already (a run never overwrites a report, nor writes a second format).
    Signing refuses a body over the verifier's limits (``kit.signing.sign``)."""
    out_dir = Path(out_dir)
    present = [name for name in finished_report_names() if (out_dir / name).exists()
               or (out_dir / name).is_symlink()]
    if present:
        raise InputError(f"{out_dir} already holds {', '.join(present)}; the kit never "
                         "overwrites a report")
    encoded = encode_body(report)
    out_dir.mkdir(parents=True, exist_ok=True)
    return {name: write_new_file(out_dir / name, encoded[name]) for name in BODY_FILES}
