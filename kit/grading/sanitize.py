"""Making record details safe for strict JSON: finite numbers, string keys, valid UTF-8,
and a stable order for sets.

The signer canonicalises report.json and rejects NaN/Infinity, and tier tests put whatever
their comparison produced into ``details``; so non-finite floats become the strings
``"nan"``, ``"inf"``, ``"-inf"`` and anything that is not JSON becomes its ``str()``.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping
from typing import Any


def json_safe(value: Any) -> Any:
    """A copy of ``value`` that ``json.dumps(allow_nan=False)`` accepts."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return finite_or_text(float(value))
    if isinstance(value, Mapping):
        return {safe_text(str(key)): json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    if isinstance(value, (set, frozenset)):
        # A set's order changes with the hash seed; sorted, the same details give the same bytes.
        items = [json_safe(item) for item in value]
        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
    return safe_text(str(value))


def finite_or_text(number: float) -> float | str:
    if math.isnan(number):
        return "nan"
    if math.isinf(number):
        return "inf" if number > 0 else "-inf"
    return number


def safe_text(text: str) -> str:
    """``text`` with lone surrogates (undecodable bytes) spelled out, so it encodes as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text
