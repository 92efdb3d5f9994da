"""JSON parsing that refuses anything two parsers could read differently.

A signed payload must mean one thing. Duplicate keys (first-wins vs last-wins), NaN/Infinity (not
JSON at all), invalid UTF-8, lone surrogates and trailing bytes all let a verifier and a consumer
disagree about what was signed, so they are rejected rather than tolerated.
"""

from __future__ import annotations

import contextlib
import gc
import json
import math
import re
from collections.abc import Iterator
from typing import Any

from kit.errors import KitError, VerificationError

#: How deep a JSON document the kit reads may nest: a report nests about 6 deep. Far deeper
#: (a 988-deep report) would exhaust the recursion of whatever walks it next (the canonical
#: encoding ``ckit sign`` hashes) and end in an internal error instead of one line.
MAX_JSON_DEPTH = 64


class _Rejected(ValueError):
    """Raised from inside the json hooks; turned into a one-line KitError by ``loads_strict``."""


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Built by dict() at C speed: a whole-run report has over 100,000 objects. Fewer keys than
    # pairs means a duplicate; only then are the keys walked, to name the first.
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Rejected(f"duplicate key {key!r}")
            seen.add(key)
    return result


def _reject_constant(name: str) -> Any:
    raise _Rejected(f"non-finite number {name} is not allowed")


def _finite_float(text: str) -> float:
    """``1e999`` is valid JSON but parses to infinity, which no canonical form can write back."""
    number = float(text)
    if not math.isfinite(number):
        raise _Rejected(f"number {text[:40]} is too large to be finite")
    return number


def _check_encodable(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise _Rejected(f"string {text[:40]!r} contains a lone surrogate") from None


#: Valid UTF-8 cannot hold a surrogate: only a ``\\uD800``-``\\uDFFF`` escape makes one.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _check_strings(document: Any) -> None:
    """Reject ``"\\ud800"``-style escapes: they decode to text no UTF-8 encoder can write back."""
    pending = [document]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            _check_encodable(value)
        elif isinstance(value, dict):
            for key, item in value.items():
                _check_encodable(key)
                pending.append(item)
        elif isinstance(value, list):
            pending.extend(value)


def _check_depth(document: Any) -> None:
    """Level by level, so a deep document never costs this walk its own recursion; each level
    is one comprehension over the containers' children (a whole-run report has a million)."""
    level = [document] if type(document) in (dict, list) else []
    depth = 1
    while level:
        if depth > MAX_JSON_DEPTH:
            raise _Rejected(f"nested deeper than {MAX_JSON_DEPTH} levels")
        below: list[Any] = []
        for value in level:
            children = value.values() if type(value) is dict else value
            below += [child for child in children if type(child) is dict or type(child) is list]
        level = below
        depth += 1


def _decode_utf8(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = data[exc.start]
        raise _Rejected(f"not valid UTF-8 (byte 0x{bad:02x} at offset {exc.start})") from None


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused while documents are built and read: a parsed document
    holds no cycle, yet a whole-run report's million objects would set the collector off over
    and over (about a seventh of verify's time)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def loads_strict(
    data: bytes, *, what: str = "JSON", error: type[KitError] = VerificationError
) -> Any:
    """Parse ``data`` strictly; any problem raises ``error`` with a one-line message."""
    try:
        with collector_paused():
            document = json.loads(
                _decode_utf8(data),
                object_pairs_hook=_reject_duplicates,
                parse_constant=_reject_constant,
                parse_float=_finite_float,
            )
        if _SURROGATE_ESCAPE.search(data):  # otherwise no string can hold one: skip the walk
            _check_strings(document)
        _check_depth(document)
    except _Rejected as exc:
        raise error(f"{what}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise error(f"{what}: invalid JSON: {exc}") from None
    except (ValueError, RecursionError) as exc:
        # Integers beyond the int-digits limit, or nesting deeper than the parser's stack.
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise error(f"{what}: invalid JSON: {first_line}") from None
    return document


def canonical_json(document: Any) -> bytes:
    """One byte string per value: sorted keys, no whitespace, UTF-8, finite numbers only."""
    text = json.dumps(
        document, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return text.encode("utf-8")
