"""Execution apart from judgement: the vendor's process runs, the kit's process judges.

A tier test has two halves. ``execute`` runs on the vendor device, in a process that imported
the vendor's modules, and returns *evidence*: the raw results, moved to CPU (for the unit tier
also the inputs after the call). ``judge`` rebuilds the same seeded inputs, computes the CPU
reference and compares, in a process that never imported vendor code (``kit.runner.judge``).
A vendor module that patches torch, the kit or CPU kernels can then break its own results, but
cannot make a wrong result pass: the reference and the comparison run elsewhere.

Under plain pytest (one test rerun by hand) both halves run in the same process. Under
``ckit run`` the worker only executes and saves the evidence to the file the orchestrator
named; the orchestrator hands that file to a judge.

The evidence file holds tensors and plain containers only, in the kit's own format
(``kit.evidence_file``: data, no pickle), and is read from a regular file under a size limit.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import torch

from kit.errors import KitError
from kit.evidence_file import read_evidence, write_evidence

#: The largest evidence file a judge reads (the unit tier's are kilobytes, models' megabytes).
EVIDENCE_LIMIT_BYTES = 1 << 30

Evidence = Any
T = TypeVar("T")


class EvidenceError(KitError):
    """The evidence a worker left is missing, not a regular file, too large or unreadable."""


def run_split(
    evidence_path: Path | None,
    execute: Callable[[], Evidence],
    judge: Callable[[Evidence], T],
) -> T | None:
    """Execute; then judge here (plain pytest) or save for a judge process (``ckit run``)."""
    evidence = execute()
    if evidence_path is None:
        return judge(evidence)
    save_evidence(evidence_path, evidence)
    return None


def save_evidence(path: Path, evidence: Evidence) -> None:
    write_evidence(path, _plain(evidence))


def load_evidence(path: Path) -> Evidence:
    """The evidence at ``path``: a regular file (not followed through a symlink), bounded."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise EvidenceError(f"no evidence from the worker ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise EvidenceError("the worker's evidence is not a regular file")
        if info.st_size > EVIDENCE_LIMIT_BYTES:
            raise EvidenceError(
                f"the worker's evidence is {info.st_size} bytes (limit {EVIDENCE_LIMIT_BYTES})"
            )
        try:
            return read_evidence(handle, info.st_size)
        except Exception as exc:  # noqa: BLE001 - any unreadable file is the same verdict
            first_line = _printable((str(exc).strip().splitlines() or [""])[0][:200])
            raise EvidenceError(
                f"the worker's evidence is unreadable ({type(exc).__name__}: {first_line})"
            ) from None


#: Leaves the evidence file holds as they are.
_PLAIN_LEAVES = (bool, int, float, complex, str, type(None), torch.dtype, torch.Size)


def _plain(value: Any) -> Any:
    """Tensors in plain lists, tuples and dicts: namedtuples (``torch.return_types``) and model
    output classes become tuples and dicts, which the evidence file holds; any other leaf
    (a slice or ``Ellipsis`` in an indexing op's arguments) becomes its ``repr``."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
        items = [_plain(item) for item in value]
        return items if isinstance(value, list) else tuple(items)
    return value if isinstance(value, _PLAIN_LEAVES) else repr(value)


def _printable(text: str) -> str:
    # torch's messages carry terminal escapes; a record's message must not.
    return "".join(ch for ch in text if ch.isprintable())
