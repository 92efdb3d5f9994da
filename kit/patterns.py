"""Matching stable test ids against the glob patterns used by standards and skip manifests.

``*`` matches within one path segment, ``**`` across segments, so ``unit/opinfo/add/*/*`` does
not accidentally match a deeper id.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable


@functools.lru_cache(maxsize=4096)
def _compile(pattern: str) -> re.Pattern[str]:
    parts: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            parts.append(".*")
            i += 2
        elif pattern[i] == "*":
            parts.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            parts.append("[^/]")
            i += 1
        else:
            parts.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(parts) + r"\Z")


def matches(test_id: str, pattern: str) -> bool:
    return _compile(pattern).match(test_id) is not None


@functools.lru_cache(maxsize=1024)
def _compile_any(patterns: tuple[str, ...]) -> re.Pattern[str]:
    # One alternation, not a loop of matches: planning and regrading test every locked id.
    return re.compile("|".join(f"(?:{_compile(p).pattern})" for p in patterns))


def select_ids(ids: Iterable[str], patterns: tuple[str, ...] | list[str]) -> list[str]:
    """The ``ids`` matching any of ``patterns``, in order (all of them when there are none)."""
    if not patterns:
        return list(ids)
    return list(filter(_compile_any(tuple(patterns)).match, ids))  # C-level loop: 10^4 ids


def matches_any(test_id: str, patterns: tuple[str, ...] | list[str]) -> bool:
    return bool(patterns) and _compile_any(tuple(patterns)).match(test_id) is not None
