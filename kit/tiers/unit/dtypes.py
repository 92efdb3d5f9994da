"""The dtypes the unit tier knows, and reading a list of them from a tier file."""

from __future__ import annotations

from typing import Any

from kit.errors import InputError

UNIT_DTYPES = ("float32", "float64", "bfloat16", "float16", "int64", "int32", "bool")

def parse_dtypes(raw: Any, where: str) -> tuple[str, ...]:
    if not isinstance(raw, list) or not raw:
        raise InputError(f"{where}: expected a non-empty list of dtypes from {list(UNIT_DTYPES)}")
    for dtype in raw:
        if dtype not in UNIT_DTYPES:
            raise InputError(
                f"{where}: unknown dtype {dtype!r} (expected one of {list(UNIT_DTYPES)})"
            )
    reject_duplicates(raw, where)
    return tuple(raw)


def reject_duplicates(values: list[Any], where: str) -> None:
    seen: set[Any] = set()
    for value in values:
        if value in seen:
            raise InputError(f"{where}: {value!r} is listed twice")
        seen.add(value)
