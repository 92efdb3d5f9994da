"""Judging recorded device outputs with the standard's current numerics rules.

A corpus is one ``numpy.savez_compressed`` archive of what a real device returned for unit
tests, beside the reference the kit compared against (format: ``../shared/corpus/README.md``
of the kit's workspace)::

    <test id>::actual::<i>      the device output i (bfloat16 stored exactly as float32)
    <test id>::dtype::<i>       its dtype name
    <test id>::reference::<i>   the reference for output i

Each test is rebuilt from its id by the kit's own case builders only for what the rules need
besides the two arrays: its op class and overrides, the outputs it compares, and the input
shapes that give the accumulation length. Inputs of low-precision tests may differ between
torch releases; shapes do not, and the recorded reference is used as is.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import numpy as np
import torch

from kit.errors import InputError
from kit.numerics.comparison import Measurement
from kit.outcomes import worst_of
from kit.standard import Standard
from kit.tiers.unit.cases import unit_case
from kit.tiers.unit.checking import case_bound

#: The parts of one recorded output.
PARTS = ("actual", "dtype", "reference")


@dataclass(frozen=True)
class RecordedOutput:
    actual: torch.Tensor
    reference: torch.Tensor


class CorpusVerdictJson(TypedDict):
    """One line of ``ckit standard corpus --json``'s tests."""

    id: str
    verdict: str
    #: The worst measurement (``Measurement.to_json``), where the test was judged.
    worst: NotRequired[Mapping[str, object]]
    message: NotRequired[str]


@dataclass(frozen=True)
class CorpusVerdict:
    test_id: str
    #: PASS, FAIL, or UNKNOWN (the id is not a test of this standard).
    verdict: str
    worst: Measurement | None
    message: str = ""

    def to_json(self) -> CorpusVerdictJson:
        data: CorpusVerdictJson = {"id": self.test_id, "verdict": self.verdict}
        if self.worst is not None:
            data["worst"] = self.worst.to_json()
        if self.message:
            data["message"] = self.message
        return data


def load_corpus(path: Path) -> dict[str, list[RecordedOutput]]:
    """Every recorded test's outputs, by test id, in output order."""
    try:
        archive = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: not a readable corpus archive ({exc})") from None
    parts: dict[str, dict[int, dict[str, str]]] = collections.defaultdict(dict)
    with archive:
        for key in archive.files:
            test_id, part, index = _split_key(key, path)
            parts[test_id].setdefault(index, {})[part] = key
        return {
            test_id: [_output(archive, outputs[i], path) for i in sorted(outputs)]
            for test_id, outputs in sorted(parts.items())
        }


def _split_key(key: str, path: Path) -> tuple[str, str, int]:
    pieces = key.rsplit("::", 2)
    if len(pieces) != 3 or pieces[1] not in PARTS or not pieces[2].isdigit():
        raise InputError(f"{path}: unexpected key {key!r} (expected '<test id>::<part>::<i>')")
    return pieces[0], pieces[1], int(pieces[2])


def _output(archive: Any, keys: Mapping[str, str], path: Path) -> RecordedOutput:
    missing = [part for part in PARTS if part not in keys]
    if missing:
        raise InputError(f"{path}: {next(iter(keys.values()))} has no {missing[0]!r} part")
    dtype = getattr(torch, str(archive[keys["dtype"]]), None)
    if not isinstance(dtype, torch.dtype):
        raise InputError(f"{path}: {keys['dtype']}: unknown dtype {archive[keys['dtype']]!r}")
    actual = torch.from_numpy(np.array(archive[keys["actual"]])).to(dtype)
    reference = torch.from_numpy(np.array(archive[keys["reference"]]))
    return RecordedOutput(actual, reference)


def judge_corpus(
    standard: Standard, corpus: Mapping[str, list[RecordedOutput]]
) -> Iterator[CorpusVerdict]:
    for test_id, outputs in corpus.items():
        yield judge_recording(standard, test_id, outputs)


def judge_recording(
    standard: Standard, test_id: str, outputs: list[RecordedOutput]
) -> CorpusVerdict:
    try:
        case = unit_case(standard, test_id)
    except InputError as exc:
        return CorpusVerdict(test_id, "UNKNOWN", None, str(exc))
    picked = case.comparison.compare_outputs
    compared = [o for i, o in enumerate(outputs) if picked is None or i in picked]
    output_numel = max((o.actual.numel() for o in compared), default=1)
    bound = case_bound(standard, case, case.make_inputs("cpu", False), output_numel)
    measurements = [
        m
        for i, o in enumerate(compared)
        for m in bound.judge(o.actual, o.reference, f"output[{i}]").measurements
    ]
    worst = worst_of(measurements)
    failed = worst is not None and worst.mismatched > 0
    return CorpusVerdict(test_id, "FAIL" if failed else "PASS", worst)
