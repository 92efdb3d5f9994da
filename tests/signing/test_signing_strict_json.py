"""Strict JSON: every input two parsers could read differently is refused with one line."""

from __future__ import annotations

import json

import pytest

from kit.errors import InputError, VerificationError
from kit.strict_json import canonical_json, loads_strict


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"a": 1, "a": 2}', "duplicate key 'a'"),
        (b'{"outer": {"vendor": "x", "vendor": "y"}}', "duplicate key 'vendor'"),
        (b'[{"k": 1}, {"k": 1, "k": 1}]', "duplicate key 'k'"),
        (b'{"x": NaN}', "non-finite number NaN is not allowed"),
        (b'{"x": Infinity}', "non-finite number Infinity is not allowed"),
        (b"[-Infinity]", "non-finite number -Infinity is not allowed"),
        (b'{"x": "caf\xe9"}', "not valid UTF-8 (byte 0xe9 at offset 10)"),
        (b'{"x": 1} trailing', "invalid JSON: Extra data"),
        (b'{"x": 1}{"x": 2}', "invalid JSON: Extra data"),
        (b'{"x": 1', "invalid JSON: Expecting"),
        (b"", "invalid JSON: Expecting value"),
        (b'{"x": "\\ud800"}', "contains a lone surrogate"),
        (b'{"\\udc00": 1}', "contains a lone surrogate"),
        (b'\xef\xbb\xbf{"x": 1}', "invalid JSON: Unexpected UTF-8 BOM"),
        (b"[" + b"9" * 5000 + b"]", "invalid JSON: "),
    ],
    ids=[
        "duplicate_key",
        "nested_duplicate_key",
        "duplicate_key_in_list",
        "nan",
        "infinity",
        "negative_infinity",
        "invalid_utf8",
        "trailing_garbage",
        "second_document",
        "truncated",
        "empty",
        "lone_surrogate_value",
        "lone_surrogate_key",
        "byte_order_mark",
        "integer_longer_than_the_digit_limit",
    ],
)
def test_loads_strict_rejects(data: bytes, message: str) -> None:
    with pytest.raises(VerificationError) as caught:
        loads_strict(data, what="payload")
    assert str(caught.value).startswith("payload: ")
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_loads_strict_raises_the_error_class_asked_for() -> None:
    with pytest.raises(InputError, match=r"^report\.json: duplicate key 'a'$"):
        loads_strict(b'{"a": 1, "a": 1}', what="report.json", error=InputError)


def test_loads_strict_accepts_ordinary_json() -> None:
    data = '{"name": "café", "values": [1, 2.5, -3e-7, true, null], "nested": {"a": {}}}'
    assert loads_strict(data.encode("utf-8")) == json.loads(data)


def test_canonical_json_is_sorted_compact_utf8() -> None:
    assert canonical_json({"b": [1, 2.5], "a": "é", "c": {"z": None, "y": True}}) == (
        '{"a":"é","b":[1,2.5],"c":{"y":true,"z":null}}'.encode()
    )


def test_canonical_json_is_independent_of_key_order() -> None:
    assert canonical_json({"x": 1, "y": {"q": 1, "p": 2}}) == canonical_json(
        {"y": {"p": 2, "q": 1}, "x": 1}
    )


def test_canonical_json_round_trips_through_loads_strict() -> None:
    document = {"vendor": {"id": "acme"}, "numbers": [0.1, 1e300, -0.0, 12345678901234567890]}
    assert loads_strict(canonical_json(document)) == document


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_canonical_json_refuses_non_finite_numbers(value: float) -> None:
    with pytest.raises(ValueError):
        canonical_json({"x": value})
