"""How to reproduce one failing unit test: its inputs, its seed, the one pytest command.

Computed in the kit's own process from the standard alone (the same rebuild the judge does,
``kit.tiers.unit.unit_case``), never from anything the vendor's code returned. Every value is
printable text or numbers, and the whole is bounded, so a large sample cannot bloat the report.
"""

from __future__ import annotations

import json
import shlex
import zlib
from collections.abc import Mapping
from typing import Any, TypedDict

from kit.printable import printable
from kit.standard import Standard

#: Characters of one non-tensor argument's repr.
MAX_VALUE_CHARS = 200
#: Items shown of one list, tuple or mapping.
MAX_ITEMS = 32
#: Characters of the whole input description once JSON-encoded.
MAX_INPUTS_CHARS = 8000
#: Where the unit tier's pytest suites live, relative to the kit's source tree.
UNIT_SUITES = "kit/tiers/unit"


class CallDescription(TypedDict):
    """A call's inputs as ``describe`` writes them: tensors as shape, dtype and strides, any
    other value as itself or its repr (arbitrary JSON: whatever the op takes)."""

    args: Any
    kwargs: Any


class TruncatedInputs(TypedDict):
    """A description longer than ``MAX_INPUTS_CHARS``: its JSON, cut."""

    truncated: str


class Repro(TypedDict):
    """``details.repro`` of a failing unit test."""

    inputs: CallDescription | TruncatedInputs
    seed: int
    pytest: str


def pytest_command(test_id: str, vendor_id: str) -> str:
    """The command that reruns ``test_id`` alone on ``vendor_id``'s device (kit.pytest_plugin)."""
    return shlex.join(
        ["python", "-m", "pytest", UNIT_SUITES, f"--ckit-vendor={vendor_id}",
         f"--ckit-select={test_id}"]
    )


def unit_repro(standard: Standard, test_id: str, vendor_id: str) -> Repro:
    """``{"inputs", "seed", "pytest"}`` for one unit test id of ``standard``."""
    from kit.tiers.unit.cases import unit_case

    case = unit_case(standard, test_id)
    inputs = bounded(describe_call(case.make_inputs("cpu", False)))
    return {"inputs": inputs, "seed": seed_of_test(standard, test_id),
            "pytest": pytest_command(test_id, vendor_id)}


def seed_of_test(standard: Standard, test_id: str) -> int:
    """The seed the test's inputs were generated under (``kit.tiers.unit.samples``, ``opspecs``)."""
    from kit.tiers.unit.config import load_unit_config
    from kit.tiers.unit.opinfo_cases import parse_opinfo_id
    from kit.tiers.unit.samples import seed_of
    from kit.tiers.unit.unit_id import OPINFO_PREFIXES

    if not test_id.startswith(OPINFO_PREFIXES):
        return zlib.crc32(test_id.encode())
    case = parse_opinfo_id(test_id)
    entry = load_unit_config(standard).op(case.op_key, case.source)
    return seed_of(f"{entry.name}.{entry.variant}", case.dtype)


def describe_call(inputs: Any) -> CallDescription:
    """``(positional, keyword)`` inputs as ``{"args": [...], "kwargs": {...}}``."""
    if isinstance(inputs, tuple | list) and len(inputs) == 2 and isinstance(inputs[1], Mapping):
        return {"args": describe(inputs[0]), "kwargs": describe(inputs[1])}
    return {"args": describe(inputs), "kwargs": {}}


def describe(value: Any) -> Any:
    """Tensors as shape, dtype and strides; containers item by item; anything else as a repr."""
    import torch

    if isinstance(value, torch.Tensor):
        return {"shape": list(value.shape), "dtype": str(value.dtype).removeprefix("torch."),
                "stride": list(value.stride())}
    if isinstance(value, Mapping):
        items = list(value.items())
        shown = {printable(str(k))[:MAX_VALUE_CHARS]: describe(v) for k, v in items[:MAX_ITEMS]}
        return shown | ({"...": f"{len(items) - MAX_ITEMS} more"} if len(items) > MAX_ITEMS else {})
    if isinstance(value, tuple | list):
        shown_items = [describe(v) for v in value[:MAX_ITEMS]]
        more = [f"... {len(value) - MAX_ITEMS} more"] if len(value) > MAX_ITEMS else []
        return shown_items + more
    if value is None or isinstance(value, bool | int | float | str):
        return value if not isinstance(value, str) else printable(value)[:MAX_VALUE_CHARS]
    return printable(repr(value))[:MAX_VALUE_CHARS]


def bounded(description: CallDescription) -> CallDescription | TruncatedInputs:
    """``description``, or its JSON cut to ``MAX_INPUTS_CHARS`` when it is larger."""
    text = json.dumps(description, default=str)  # NaN and inf: the report's json_safe spells them
    if len(text) <= MAX_INPUTS_CHARS:
        return description
    return {"truncated": text[:MAX_INPUTS_CHARS]}
