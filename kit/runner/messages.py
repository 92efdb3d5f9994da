"""Every message between the orchestrator, its workers and its judges, as typed values.

``protocol.py`` frames JSON objects as lines; this module gives each object a type: ``encode``
turns a message into the object, ``decode`` turns an object back into a message and refuses,
with ``ProtocolError``, anything else: an unknown type, a missing or extra field, a field of the
wrong type, or another protocol version.

Every message carries ``PROTOCOL_VERSION``, not only the handshake: ``decode`` is then the one
place that checks it, and no message is ever read under another version's meaning, whatever
order it arrives in (a child's stray line before ``ready``, say). It costs a few bytes a line.

Who sends what: a worker announces ``WorkerReady`` and then answers ``RunTest`` with
``RunResult`` and ``Probe`` with ``ProbeCheck``s and one ``ProbeResult``; a judge announces
``JudgeReady`` and answers ``JudgeTest`` with ``Judged``; ``Exit`` stops either. A record is a
``TestRecord`` and a probe report a ``ProbeReport`` on both ends, on the wire their
``to_json()``, checked field by field here like a message's own.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Union

from kit.results import Status, TestRecord, tier_of
from kit.runner.probe import ProbeFinding, ProbeReport
from kit.runner.protocol import LineReader, ProtocolError, send

#: Raised whenever a message changes shape; both ends are the same kit, so they always agree.
PROTOCOL_VERSION = 1

_TYPE_KEY = "type"
_VERSION_KEY = "protocol"


@dataclass(frozen=True)
class WorkerReady:
    """A worker collected its suites: the stable ids it can run and the device it enabled."""

    kind: ClassVar[str] = "worker_ready"
    ids: tuple[str, ...]
    device: dict[str, Any] | None
    device_problem: str | None
    pid: int


@dataclass(frozen=True)
class JudgeReady:
    kind: ClassVar[str] = "judge_ready"
    pid: int


@dataclass(frozen=True)
class RunTest:
    kind: ClassVar[str] = "run"
    id: str


@dataclass(frozen=True)
class RunResult:
    """A worker's record of the test it ran."""

    kind: ClassVar[str] = "result"
    id: str
    record: TestRecord


@dataclass(frozen=True)
class Probe:
    """Check the device's health, leaving out the ops the ``suspects`` implicate."""

    kind: ClassVar[str] = "probe"
    suspects: tuple[str, ...]


@dataclass(frozen=True)
class ProbeCheck:
    """Sent before each probe check, so a check that kills the worker is named."""

    kind: ClassVar[str] = "probe_check"
    op: str
    dtype: str


@dataclass(frozen=True)
class ProbeResult:
    """The probe's report."""

    kind: ClassVar[str] = "probe_result"
    report: ProbeReport


@dataclass(frozen=True)
class JudgeTest:
    """Judge the evidence a worker left for ``id``; ``duration`` is the execution's."""

    kind: ClassVar[str] = "judge"
    id: str
    evidence: str
    duration: float


@dataclass(frozen=True)
class Judged:
    """The judge's record of ``id``."""

    kind: ClassVar[str] = "verdict"
    id: str
    record: TestRecord


@dataclass(frozen=True)
class Exit:
    kind: ClassVar[str] = "exit"


Message = (
    WorkerReady | JudgeReady | RunTest | RunResult | Probe | ProbeCheck | ProbeResult
    | JudgeTest | Judged | Exit
)
_CLASSES: dict[str, type[Message]] = {cls.kind: cls for cls in typing.get_args(Message)}


def encode(message: Message) -> dict[str, Any]:
    """The JSON object that carries ``message`` (tuples become lists)."""
    data: dict[str, Any] = {_TYPE_KEY: message.kind, _VERSION_KEY: PROTOCOL_VERSION}
    for field in fields(message):
        value = getattr(message, field.name)
        if isinstance(value, (TestRecord, ProbeReport)):
            value = value.to_json()
        data[field.name] = list(value) if isinstance(value, tuple) else value
    return data


def decode(data: dict[str, Any]) -> Message:
    """The message ``data`` carries; ``ProtocolError`` for anything that is not one."""
    version = data.get(_VERSION_KEY)
    if type(version) is not int or version != PROTOCOL_VERSION:
        raise ProtocolError(f"protocol version {version!r}, expected {PROTOCOL_VERSION}")
    kind = data.get(_TYPE_KEY)
    cls = _CLASSES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ProtocolError(f"unknown message type {kind!r}")
    hints = _FIELD_TYPES[cls.kind]
    given = set(data) - {_TYPE_KEY, _VERSION_KEY}
    if missing := sorted(set(hints) - given):
        raise ProtocolError(f"a {kind!r} message without {', '.join(missing)}")
    if extra := sorted(given - set(hints)):
        raise ProtocolError(f"a {kind!r} message with unknown field {', '.join(extra)}")
    values = {name: _checked(data[name], hints[name], f"{kind}.{name}") for name in hints}
    return cls(**values)


def send_message(fd: int, message: Message) -> None:
    send(fd, encode(message))


def receive_message(reader: LineReader, timeout: float | None) -> Message:
    return decode(reader.receive(timeout))


def _field_types(cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    return {field.name: hints[field.name] for field in fields(cls)}


def _checked(value: object, expected: Any, where: str) -> Any:
    """``value`` as a value of type ``expected`` (a JSON list as a tuple), or ProtocolError."""
    origin = typing.get_origin(expected)
    if origin in (Union, types.UnionType):
        for option in typing.get_args(expected):
            try:
                return _checked(value, option, where)
            except ProtocolError:
                continue
    elif expected is TestRecord and isinstance(value, dict):
        return _record(value, where)
    elif expected is ProbeReport and isinstance(value, dict):
        return _probe_report(value, where)
    elif origin is tuple and isinstance(value, list):
        item_type = typing.get_args(expected)[0]
        return tuple(_checked(item, item_type, where) for item in value)
    elif origin is dict and isinstance(value, dict):
        if all(isinstance(key, str) for key in value):
            return value
    elif expected is float and type(value) in (int, float):
        return float(value)  # type: ignore[arg-type]
    elif isinstance(expected, type) and type(value) is expected:
        return value  # exactly: a JSON true is no int
    raise ProtocolError(f"{where} is a {type(value).__name__}, not {_name(expected)}")


#: A record's fields on the wire (``TestRecord.to_json``) and their types.
_RECORD_FIELDS: dict[str, object] = {"id": str, "status": str, "duration_s": float, "message": str,
                                   "details": dict, "tier": str}


def _record(data: dict[Any, object], where: str) -> TestRecord:
    """The record ``data`` carries: exactly a record's fields, each of its type, a known status
    and the id's own tier; ``ProtocolError`` otherwise."""
    values = _exact(data, _RECORD_FIELDS, where)
    try:
        status = Status(values["status"])
    except ValueError:
        raise ProtocolError(f"{where}.status {values['status']!r} is no status") from None
    if values["tier"] != tier_of(values["id"]):
        raise ProtocolError(f"{where}.tier {values['tier']!r} is not its id's")
    return TestRecord(values["id"], status, values["duration_s"], values["message"],
                      values["details"])


#: A probe report's fields on the wire (``ProbeReport.to_json``: ``ok`` and ``message`` are
#: derived, read back from the findings) and a finding's.
_PROBE_FIELDS: dict[str, object] = {"ok": bool, "message": str, "checked": int,
                                 "avoided": tuple[str, ...], "findings": list}
_FINDING_FIELDS: dict[str, object] = {"op": str, "dtype": str, "problem": str, "fatal": bool}


def _probe_report(data: dict[Any, object], where: str) -> ProbeReport:
    """The probe report ``data`` carries, checked as ``_record`` checks a record."""
    values = _exact(data, _PROBE_FIELDS, where)
    findings = []
    for index, item in enumerate(values["findings"]):
        place = f"{where}.findings[{index}]"
        if not isinstance(item, dict):
            raise ProtocolError(f"{place} is a {type(item).__name__}, not an object")
        finding = _exact(item, _FINDING_FIELDS, place)
        findings.append(ProbeFinding(finding["op"], finding["dtype"], finding["problem"],
                                     finding["fatal"]))
    return ProbeReport(tuple(findings), values["checked"], values["avoided"])


def _exact(data: dict[Any, object], expected: dict[str, object], where: str
           ) -> dict[str, Any]:
    """``data``'s values, each checked against its type; ``ProtocolError`` unless ``data``
    holds exactly ``expected``'s fields."""
    if set(data) != set(expected):
        raise ProtocolError(f"{where} has fields {', '.join(sorted(map(str, data)))}, "
                            f"not {', '.join(expected)}")
    return {name: _checked(data[name], kind, f"{where}.{name}") for name, kind in expected.items()}


def _name(expected: Any) -> str:
    return expected.__name__ if isinstance(expected, type) else str(expected)


#: Each message type's fields and their types, read once.
_FIELD_TYPES = {kind: _field_types(cls) for kind, cls in _CLASSES.items()}
