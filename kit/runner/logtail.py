"""The last lines of a worker's log, for the record of a test that killed or hung the worker.

The log is the vendor's stack's output (a faulthandler traceback after a segfault), so what is
kept is bounded in size and printable.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kit.printable import printable

#: Bytes read from the end of the log, and lines kept of them.
TAIL_BYTES = 16384
TAIL_LINES = 60
#: Characters kept of one line.
MAX_LINE_CHARS = 300
#: faulthandler's first line after a fatal signal: the stack follows, innermost frame first.
FATAL_MARK = "Fatal Python error"


def tail_lines(path: Path) -> list[str]:
    """The end of ``path``: from its last fatal-error dump when it has one (the innermost
    frames come first there), else its last lines; nothing when it cannot be read."""
    try:
        with path.open("rb") as log:
            log.seek(max(0, os.fstat(log.fileno()).st_size - TAIL_BYTES))
            data = log.read(TAIL_BYTES)
    except OSError:
        return []
    lines = data.decode("utf-8", errors="replace").splitlines()
    fatal = [i for i, line in enumerate(lines) if line.startswith(FATAL_MARK)]
    kept = lines[fatal[-1] :][:TAIL_LINES] if fatal else lines[-TAIL_LINES:]
    return [printable(line)[:MAX_LINE_CHARS] for line in kept]


def worker_log_details(log_path: Path) -> dict[str, Any]:
    """``worker_log`` (relative to the run's output directory) and ``worker_log_tail``."""
    return {
        "worker_log": f"{log_path.parent.name}/{log_path.name}",
        "worker_log_tail": tail_lines(log_path),
    }
