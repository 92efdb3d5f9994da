"""Where golden artifacts live in a run's output directory, and which names are safe there.

``golden/<flow>/<test id path>/`` holds ``inputs/<i>.bin``, ``outputs/<i>.bin`` (raw
little-endian tensor bytes), each with a ``<i>.json`` sidecar (dtype and shape), and the
program (``program.pte`` or ``program.onnx``). A test id is ``/``-separated; each segment
becomes a directory, so every segment is checked before it names one.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from kit.errors import InputError
from kit.rundir import GOLDEN_DIR
from kit.test_ids import TestId

__all__ = [
    "INPUTS",
    "OUTPUTS",
    "PROGRAM_NAMES",
    "STAGING",
    "entry_path",
    "unsafe_segment",
]

INPUTS = "inputs"
OUTPUTS = "outputs"
#: The program file of each format (the format is also the reference runtime's name).
PROGRAM_NAMES = {"pte": "program.pte", "onnx": "program.onnx"}
#: Where an entry is written before it is moved into place (removed when the run finishes).
STAGING = ".staging"

#: A plain name: never empty, never ``.``/``..`` nor hidden (no leading dot), no separator.
_SEGMENT = re.compile(r"[A-Za-z0-9_+=,-][A-Za-z0-9._+=,-]{0,127}")
#: Names an entry uses itself: a test id segment spelled so would mix two entries' files.
_RESERVED = frozenset({INPUTS, OUTPUTS, *PROGRAM_NAMES.values()})


def unsafe_segment(segment: str) -> str | None:
    """Why ``segment`` cannot name a directory of an entry, or None when it can."""
    if not _SEGMENT.fullmatch(segment):
        return f"segment {segment!r} is not a plain name (empty, hidden, '..' or odd characters)"
    if segment in _RESERVED:
        return f"segment {segment!r} is a name the entry uses for its own files"
    return None


def entry_path(flow: str, test_id: str) -> PurePosixPath:
    """``golden/<flow>/<test id>``; ``ValueError`` naming the first unsafe segment."""
    try:
        parsed = TestId.split(test_id)
    except InputError as exc:
        raise ValueError(str(exc)) from None
    segments = [flow, parsed.tier, *parsed.segments]
    for segment in segments:
        problem = unsafe_segment(segment)
        if problem is not None:
            raise ValueError(problem)
    return PurePosixPath(GOLDEN_DIR, *segments)
