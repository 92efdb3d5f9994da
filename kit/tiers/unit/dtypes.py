"""The dtypes the unit tier knows, and reading a list of them from a tier file."""

from __future__ import annotations

from kit.config_reader import Node

UNIT_DTYPES = ("float32", "float64", "bfloat16", "float16", "int64", "int32", "bool")


def parse_dtypes(node: Node) -> tuple[str, ...]:
    """A non-empty list of distinct dtypes the unit tier may test."""
    return node.choices(UNIT_DTYPES, non_empty=True, unique=True)
