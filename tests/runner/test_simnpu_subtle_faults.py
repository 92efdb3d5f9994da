"""Subtle kernel bugs the unit tier's coverage variants exist to catch, on the real simnpu device.

Each fault fires only on one kind of input (an empty tensor, four or more inputs, integer
extremes, ``alpha=2``) or damages something besides the result (an input written in place,
half precision poisoned for the rest of the process). One ``ckit run`` injects them all, each
into its own op; the table names the test that must catch it, the status it must get, and a
test of the same op the fault must not touch (so the blame lands on the right input, not the
whole op). Controls in float16/bfloat16 run after the half-precision poisoning and must pass.
The rules are planted into the suite's shared faulty simnpu run (``simnpu_faults_run``).
"""

from __future__ import annotations

from typing import Any

import pytest
from runner_helpers import plant_simnpu_faults

pytestmark = pytest.mark.slow(seconds=100)


def _id(op: str, dtype: str, sample: str) -> str:
    return f"unit/opinfo/{op}/{dtype}/{sample}"


# (fault, rule, test that must catch it, its status, a test of the same op left alone)
TABLE: list[tuple[str, dict[str, Any], str, str, str]] = [
    (
        "abort-on-empty-input",
        {"op": "leaky_relu", "kind": "abort", "empty": True},
        _id("nn.functional.leaky_relu", "float32", "empty"),
        "CRASH",
        _id("nn.functional.leaky_relu", "float32", "0"),
    ),
    (
        "hang-on-4-way-cat",
        {"op": "cat", "kind": "hang", "min_inputs": 4, "dtype": "float32"},
        _id("cat", "float32", "arity4"),
        "TIMEOUT",
        _id("cat", "float32", "arity1"),
    ),
    (
        "saturating-int32-add",
        {"op": "add", "kind": "saturate", "dtype": "int32"},
        _id("add", "int32", "extremes"),
        "FAIL_NUMERIC",
        _id("add", "int32", "0"),
    ),
    (
        "input-written-in-place",
        {"op": "mul", "kind": "write_input", "dtype": "float32"},
        _id("mul", "float32", "1"),
        "FAIL_SEMANTIC",
        _id("mul", "float64", "1"),
    ),
    (
        "wrong-only-for-alpha-2",
        {"op": "add", "kind": "wrong_small", "alpha": 2, "dtype": "float32"},
        _id("add", "float32", "9"),  # the sample with alpha=2
        "FAIL_NUMERIC",
        _id("add", "float32", "10"),  # alpha=-3.125
    ),
    (
        "half-precision-poisoned-after-a-fatal-error",
        {"op": "neg", "kind": "poison_half", "dtype": "float16"},
        _id("neg", "float16", "0"),
        "ERROR",
        _id("neg", "float32", "0"),
    ),
]
#: Half-precision tests of other ops, run after the poisoning: a worker that kept the poisoned
#: device would fail them.
HALF_CONTROLS = [
    _id("sin", "float16", "0"),
    _id("sub", "bfloat16", "1"),
    _id("tanh", "float16", "noncontiguous"),
]


plant_simnpu_faults(
    [rule for _, rule, _, _, _ in TABLE],
    [t for _, _, caught, _, spared in TABLE for t in (caught, spared)] + HALF_CONTROLS,
)


@pytest.mark.parametrize(
    ("rule", "caught", "expected"),
    [(rule, caught, expected) for _, rule, caught, expected, _ in TABLE],
    ids=[name for name, *_ in TABLE],
)
def test_fault_is_caught_and_classified(
    simnpu_faults_run: dict[str, dict[str, Any]], rule: dict[str, Any], caught: str, expected: str
) -> None:
    record = simnpu_faults_run[caught]
    assert record["status"] == expected, record["message"]
    if rule["kind"] == "write_input":
        assert record["details"]["failure"] == "input-modified"
        assert record["details"]["input"] == "args[0]"
    if rule["kind"] == "abort":
        assert record["details"]["signal"] == "SIGABRT"
    if expected == "FAIL_NUMERIC":
        assert record["details"]["mismatched"] > 0


@pytest.mark.parametrize(
    "spared", [spared for *_, spared in TABLE], ids=[name for name, *_ in TABLE]
)
def test_blame_stays_on_the_faulty_input(
    simnpu_faults_run: dict[str, dict[str, Any]], spared: str
) -> None:
    record = simnpu_faults_run[spared]
    assert record["status"] == "PASS", record["message"]


@pytest.mark.parametrize("control", HALF_CONTROLS)
def test_half_precision_poisoning_does_not_fail_later_tests(
    simnpu_faults_run: dict[str, dict[str, Any]], control: str
) -> None:
    record = simnpu_faults_run[control]
    assert record["status"] == "PASS", record["message"]
