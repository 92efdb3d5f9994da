"""The judge's writer of golden artifacts: it never raises, a failure is a counted warning.

An entry is written into ``golden/.staging/`` first and its parts are then moved into place,
so a half-written entry never sits where the manifest would list it.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kit.golden.names import INPUTS, OUTPUTS, PROGRAM_NAMES, STAGING, entry_path
from kit.golden.tensors import tensor_bytes
from kit.printable import printable
from kit.rundir import GOLDEN_UNWRITTEN_LOG, RunDir

if TYPE_CHECKING:
    import torch

    from kit.flows.interface import Lowered


class GoldenWriter:
    """Writes ``golden/<flow>/<test id>/`` under a run's output directory."""

    def __init__(self, out_dir: Path, log_dir: Path) -> None:
        self.out_dir = out_dir
        self.log_path = log_dir / GOLDEN_UNWRITTEN_LOG
        #: Artifacts this writer could not write (each also a line in ``log_path``).
        self.failures = 0

    def save(
        self,
        test_id: str,
        flow: str,
        inputs: Sequence[torch.Tensor],
        reference_outputs: Sequence[torch.Tensor],
        program: Lowered | None,
    ) -> None:
        """Write one entry; never raises (the test's verdict does not depend on it)."""
        try:
            self._save(test_id, flow, inputs, reference_outputs, program)
        except Exception as exc:  # noqa: BLE001 - a lost artifact must not cost the verdict
            self._warn(test_id, flow, f"{type(exc).__name__}: {exc}")

    def _save(
        self,
        test_id: str,
        flow: str,
        inputs: Sequence[torch.Tensor],
        outputs: Sequence[torch.Tensor],
        program: Lowered | None,
    ) -> None:
        target = self.out_dir.joinpath(*entry_path(flow, test_id).parts)
        staging = RunDir(self.out_dir).golden / STAGING / uuid.uuid4().hex
        try:
            staging.mkdir(parents=True)
            _write_tensors(staging / INPUTS, inputs)
            _write_tensors(staging / OUTPUTS, outputs)
            parts = [INPUTS, OUTPUTS]
            if program is not None:
                name = PROGRAM_NAMES.get(program.format)
                if name is None:
                    raise ValueError(f"program format {program.format!r} has no reference runtime")
                _write_file(staging / name, program.data)
                parts.append(name)
            _move_into_place(staging, target, parts)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _warn(self, test_id: str, flow: str, why: str) -> None:
        self.failures += 1
        line = printable(f"golden artifact of {test_id} ({flow}) not written: {why}")[:2000]
        print(f"ckit: warning: {line}", file=sys.stderr, flush=True)
        try:
            with open(self.log_path, "a", encoding="utf-8") as log:
                log.write(line + "\n")
        except OSError as exc:
            print(f"ckit: warning: cannot record it in {self.log_path}: {exc.strerror}",
                  file=sys.stderr, flush=True)


def _write_file(path: Path, data: bytes) -> None:
    # O_EXCL and O_NOFOLLOW: a fresh staging directory holds nothing, links least of all.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as stream:
        stream.write(data)


def _write_tensors(directory: Path, tensors: Sequence[torch.Tensor]) -> None:
    directory.mkdir()
    for index, tensor in enumerate(tensors):
        data, sidecar = tensor_bytes(tensor)
        _write_file(directory / f"{index}.bin", data)
        _write_file(directory / f"{index}.json", json.dumps(sidecar).encode("utf-8"))


def _move_into_place(staging: Path, target: Path, parts: list[str]) -> None:
    """Replace the entry's parts at ``target`` (a resumed run may judge a test again)."""
    target.mkdir(parents=True, exist_ok=True)
    for name in (INPUTS, OUTPUTS, *PROGRAM_NAMES.values()):
        old = target / name
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old)
        elif old.exists() or old.is_symlink():
            old.unlink()
    for name in parts:
        os.rename(staging / name, target / name)
