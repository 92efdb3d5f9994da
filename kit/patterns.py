"""Matching stable test ids against the glob patterns used by standards and skip manifests.

``*`` matches within one path segment, ``**`` across segments, so ``unit/opinfo/add/*/*`` does
not accidentally match a deeper id.
"""

from __future__ import annotations

import functools
import re


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


def matches_any(test_id: str, patterns: tuple[str, ...] | list[str]) -> bool:
    return any(matches(test_id, p) for p in patterns)
