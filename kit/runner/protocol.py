"""Messages between orchestrator and worker: one JSON object per line over a pipe."""

from __future__ import annotations

import json
import os
import select
import time
from typing import Any

Message = dict[str, Any]


class ChannelClosed(Exception):
    """The other end closed the pipe (the worker died or exited)."""


class ChannelTimeout(Exception):
    """No complete message arrived in time."""


def send(fd: int, message: Message) -> None:
    data = (json.dumps(message, allow_nan=True) + "\n").encode("utf-8")
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class LineReader:
    """Reads newline-terminated JSON messages from a pipe fd, with a deadline."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = b""

    def _pop_line(self) -> Message | None:
        newline = self._buffer.find(b"\n")
        if newline < 0:
            return None
        line, self._buffer = self._buffer[:newline], self._buffer[newline + 1 :]
        return json.loads(line)  # type: ignore[no-any-return]

    def receive(self, timeout: float | None) -> Message:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (message := self._pop_line()) is None:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if not ready:
                raise ChannelTimeout()
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                raise ChannelClosed()
            self._buffer += chunk
        return message
