"""Test ids in the order people count them: ``unit/opinfo/add/float32/2`` before ``.../10``.

Every human view that lists ids (``ckit show``, ``ckit diff``, the pull-request comment,
summary.md, the portal) orders them by ``natural_id_key``, so no view sorts them its own way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_DIGIT_RUNS = re.compile(r"(\d+)")


def natural_id_key(test_id: str) -> tuple[tuple[str | int, ...], str]:
    """Sort key of ``test_id``: its text with each run of digits compared as a number.

    Splitting on digit runs puts text at even positions and numbers at odd ones, so two keys
    never compare a number with text; the id itself breaks ties (``add/02`` against ``add/2``).
    """
    parts = _DIGIT_RUNS.split(test_id)
    return tuple(int(part) if index % 2 else part for index, part in enumerate(parts)), test_id


def in_natural_order(test_ids: Iterable[str]) -> list[str]:
    """``test_ids`` sorted by ``natural_id_key``."""
    return sorted(test_ids, key=natural_id_key)
