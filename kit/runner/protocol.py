"""The framing of the messages between the orchestrator and its children: one JSON object per
line over a pipe (``kit.runner.messages`` gives each object its type).

A reader never trusts the other end: a line longer than ``MESSAGE_LIMIT`` or one that is not a
JSON object is a ``ProtocolError`` (the caller makes it that test's ERROR and replaces the
child), the deadline holds while data flows, and a child that has exited counts as closed even
when something else still holds its pipe open.
"""

from __future__ import annotations

import json
import os
import select
import time
from collections.abc import Callable
from typing import Any

#: One message as framed on the pipe; ``kit.runner.messages`` gives it a type.
JsonObject = dict[str, Any]

#: The largest message accepted (a record's message and details are far smaller).
MESSAGE_LIMIT = 8 << 20
#: How often a silent channel checks that its child is still alive, seconds.
_LIVENESS_POLL_S = 0.5


class ChannelClosed(Exception):
    """The other end closed the pipe (the worker died or exited)."""


class ChannelTimeout(Exception):
    """No complete message arrived in time."""


class ProtocolError(Exception):
    """The other end sent something that is not a message: too long, or not a JSON object."""


def send(fd: int, message: JsonObject) -> None:
    data = (json.dumps(message, allow_nan=True) + "\n").encode("utf-8")
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class LineReader:
    """Reads newline-terminated JSON messages from a pipe fd, with a deadline."""

    def __init__(self, fd: int, alive: Callable[[], bool] | None = None) -> None:
        self.fd = fd
        self._alive = alive
        self._buffer = bytearray()

    def _pop_line(self) -> JsonObject | None:
        newline = self._buffer.find(b"\n")
        if newline < 0:
            if len(self._buffer) > MESSAGE_LIMIT:
                raise ProtocolError(f"a message longer than {MESSAGE_LIMIT} bytes")
            return None
        line = bytes(self._buffer[:newline])
        del self._buffer[: newline + 1]
        if len(line) > MESSAGE_LIMIT:
            raise ProtocolError(f"a message longer than {MESSAGE_LIMIT} bytes")
        try:
            message = json.loads(line)
        except ValueError:
            raise ProtocolError(f"a line that is not JSON ({line[:80]!r})") from None
        if not isinstance(message, dict):
            raise ProtocolError(f"a JSON {type(message).__name__}, not an object")
        return message

    def receive(self, timeout: float | None) -> JsonObject:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (message := self._pop_line()) is None:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise ChannelTimeout()
            wait = _LIVENESS_POLL_S if self._alive else remaining
            if remaining is not None and wait is not None:
                wait = min(wait, remaining)
            ready, _, _ = select.select([self.fd], [], [], wait)
            if not ready:
                if self._alive is not None and not self._alive() and not self._drain():
                    raise ChannelClosed()
                continue
            if not self._read():
                raise ChannelClosed()
        return message

    def answered(self) -> bool:
        """Whether ``receive`` has something to take without waiting: a whole message read
        already, or bytes (or the end of the pipe) waiting to be read."""
        if b"\n" in self._buffer:
            return True
        try:
            ready, _, _ = select.select([self.fd], [], [], 0)
        except (OSError, ValueError):  # a closed pipe: ``receive`` says what became of it
            return True
        return bool(ready)

    def _read(self) -> bool:
        chunk = os.read(self.fd, 1 << 16)
        self._buffer += chunk
        return bool(chunk)

    def _drain(self) -> bool:
        """After the child exited: take what it wrote before it died (False: nothing)."""
        ready, _, _ = select.select([self.fd], [], [], 0)
        return bool(ready) and self._read()
