"""The typed messages between the orchestrator, workers and judges: each one survives the wire
(JSON-line framing over a real pipe), and ``decode`` refuses whatever is not a message."""

from __future__ import annotations

import json
import os
import typing
from typing import Any

import pytest

from kit.results import Status, TestRecord
from kit.runner.messages import (
    PROTOCOL_VERSION,
    Exit,
    Judged,
    JudgeReady,
    JudgeTest,
    Message,
    Probe,
    ProbeCheck,
    ProbeResult,
    RunResult,
    RunTest,
    WorkerReady,
    decode,
    encode,
    receive_message,
    send_message,
)
from kit.runner.probe import ProbeFinding, ProbeReport
from kit.runner.protocol import LineReader, ProtocolError

RECORD = TestRecord("unit/opinfo/add/float32/0", Status.FAIL_NUMERIC, 0.25, "off by one",
                    {"max_abs_err": 1.0})
REPORT = ProbeReport((ProbeFinding("add", "float32", "wrong values"),), checked=3)

EVERY_MESSAGE: list[Message] = [
    WorkerReady(("unit/opinfo/add/float32/0", "deploy/smoke-op"),
                {"type": "cpu", "count": 1, "name": "x86_64"}, None, 1234),
    WorkerReady((), None, "no device", 1),
    JudgeReady(99),
    RunTest("unit/opinfo/add/float32/0"),
    RunResult("unit/opinfo/add/float32/0", RECORD),
    Probe(("unit/opinfo/add", "unit/opinfo/mul")),
    Probe(()),
    ProbeCheck("mm", "bfloat16"),
    ProbeResult(REPORT),
    JudgeTest("unit/opinfo/add/float32/0", "/tmp/run/workers/evidence-1.bin", 0.5),
    Judged("unit/opinfo/add/float32/0", RECORD),
    Exit(),
]


@pytest.mark.parametrize("message", EVERY_MESSAGE, ids=lambda m: type(m).__name__)
def test_every_message_round_trips_through_a_pipe(message: Message) -> None:
    read_fd, write_fd = os.pipe()
    try:
        send_message(write_fd, message)
        assert receive_message(LineReader(read_fd), timeout=5.0) == message
    finally:
        os.close(read_fd)
        os.close(write_fd)


def test_every_message_class_is_covered_and_has_its_own_type() -> None:
    assert {type(m) for m in EVERY_MESSAGE} == set(typing.get_args(Message))
    kinds = {encode(m)["type"] for m in EVERY_MESSAGE}
    assert len(kinds) == len(typing.get_args(Message))


def test_an_integral_duration_is_a_float() -> None:
    data = {**encode(JudgeTest("unit/x", "/e.pt", 0.0)), "duration": 2}
    decoded = decode(data)
    assert isinstance(decoded, JudgeTest) and type(decoded.duration) is float


def _run_test(**changes: Any) -> dict[str, Any]:
    return {**encode(RunTest("unit/opinfo/add/float32/0")), **changes}


@pytest.mark.parametrize(
    ("data", "refusal"),
    [
        (_run_test(type="result_forged"), "unknown message type 'result_forged'"),
        (_run_test(type="__init__"), "unknown message type '__init__'"),
        (_run_test(type=None), "unknown message type None"),
        ({k: v for k, v in _run_test().items() if k != "type"}, "unknown message type None"),
        (_run_test(extra="x"), "'run' message with unknown field extra"),
        ({k: v for k, v in _run_test().items() if k != "id"}, "'run' message without id"),
        (_run_test(id=7), r"run.id is a int, not str"),
        (_run_test(id=None), r"run.id is a NoneType, not str"),
        (_run_test(protocol=PROTOCOL_VERSION + 1), f"protocol version {PROTOCOL_VERSION + 1}"),
        (_run_test(protocol=str(PROTOCOL_VERSION)), "protocol version '1'"),
        (_run_test(protocol=True), "protocol version True"),
        ({k: v for k, v in _run_test().items() if k != "protocol"}, "protocol version None"),
    ],
)
def test_decode_refuses_what_is_not_a_message(data: dict[str, Any], refusal: str) -> None:
    with pytest.raises(ProtocolError, match=refusal):
        decode(data)


@pytest.mark.parametrize(
    ("message", "field", "value"),
    [
        (WorkerReady(("a",), None, None, 1), "pid", True),  # a JSON true is no number
        (WorkerReady(("a",), None, None, 1), "ids", "a"),
        (WorkerReady(("a",), None, None, 1), "ids", [1]),
        (WorkerReady(("a",), None, None, 1), "device", ["cpu"]),
        (WorkerReady(("a",), None, None, 1), "device_problem", 0),
        (JudgeTest("unit/x", "/e.pt", 1.0), "duration", "1.0"),
        (JudgeTest("unit/x", "/e.pt", 1.0), "duration", None),
        (Judged("unit/x", RECORD), "record", [RECORD.to_json()]),
        (ProbeCheck("add", "float32"), "dtype", ["float32"]),
    ],
)
def test_decode_refuses_a_field_of_the_wrong_type(
    message: Message, field: str, value: object
) -> None:
    with pytest.raises(ProtocolError, match=f"{type(message).kind}.{field} is a"):
        decode({**encode(message), field: value})


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"status": "MOSTLY_PASS"}, "is no status"),
        ({"tier": "models"}, "is not its id's"),
        ({"details": []}, "result.record.details is a list"),
        ({"verdict": "PASS"}, "has fields"),
    ],
    ids=["unknown-status", "other-tier", "details-not-an-object", "extra-field"],
)
def test_decode_refuses_a_record_that_is_not_one(change: dict[str, object], words: str) -> None:
    """A record is typed on the wire too: a worker's reply is read as strictly as a message."""
    line = encode(RunResult("unit/opinfo/add/float32/0", RECORD))
    with pytest.raises(ProtocolError, match=words):
        decode({**line, "record": {**line["record"], **change}})


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"checked": "3"}, "probe_result.report.checked is a"),
        ({"findings": [{"op": "add", "dtype": "float32", "problem": "x"}]}, "has fields"),
        ({"findings": ["add"]}, "findings\\[0\\] is a str"),
    ],
    ids=["checked-not-a-number", "finding-without-fatal", "finding-not-an-object"],
)
def test_decode_refuses_a_probe_report_that_is_not_one(change: dict[str, object], words: str
                                                       ) -> None:
    line = encode(ProbeResult(REPORT))
    with pytest.raises(ProtocolError, match=words):
        decode({**line, "report": {**line["report"], **change}})


def test_a_line_from_another_version_is_refused_on_the_wire() -> None:
    read_fd, write_fd = os.pipe()
    try:
        line = {**encode(RunResult("unit/x", RECORD)), "protocol": PROTOCOL_VERSION - 1}
        os.write(write_fd, (json.dumps(line) + "\n").encode())
        with pytest.raises(ProtocolError, match="protocol version"):
            receive_message(LineReader(read_fd), timeout=5.0)
    finally:
        os.close(read_fd)
        os.close(write_fd)


def test_a_reader_says_when_a_message_waits_without_waiting_itself() -> None:
    """``answered`` (the orchestrator's look at a judge's pipe between tests): nothing yet,
    half a line, a whole one, and a pipe closed since."""
    read_fd, write_fd = os.pipe()
    reader = LineReader(read_fd)
    try:
        assert not reader.answered()
        os.write(write_fd, b'{"kind": ')  # bytes waiting: receive will take them
        assert reader.answered()
        os.write(write_fd, b'"x"}\n')
        assert reader.receive(timeout=5.0) == {"kind": "x"}  # framing only: a JSON object
        assert not reader.answered()
    finally:
        os.close(write_fd)
        os.close(read_fd)
    assert reader.answered()  # closed: receive, not answered, reports what became of it
