"""Test ids parsed once: every id of the carried locked lists round-trips, and each malformed
id is refused in one line naming what is wrong."""

from __future__ import annotations

import pytest

from kit.errors import InputError
from kit.standard import load_standard
from kit.test_ids import TestId
from kit.tiers.registry import find_tier, op_and_dtype, parse_test_id, tier_names


def test_an_id_is_its_tier_and_segments() -> None:
    parsed = parse_test_id("unit/opinfo/add/float32/0")
    assert parsed == TestId("unit", ("opinfo", "add", "float32", "0"))
    assert parsed.prefix(2) == "unit/opinfo/add"
    assert parsed.prefix(0) == "unit"


def test_every_locked_id_round_trips() -> None:
    standard = load_standard()
    for tier in standard.test_lists:
        for test_id in standard.test_ids(tier):
            parsed = parse_test_id(test_id)
            assert (str(parsed), parsed.tier) == (test_id, tier)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "expected a non-empty id such as unit/opinfo/add"),
        ("unit", "names a tier and nothing in it"),
        ("unit//add/float32/0", "segment 1 is empty"),
        ("/opinfo/add", "segment 0 is empty"),
        ("models/hf/llama/", "segment 3 is empty"),
        ("unit/opinfo/add /float32/0", "holds whitespace"),
        ("unit/opinfo/add\t/float32/0", "holds whitespace"),
        ("models/hf/llama/eager\n", "holds whitespace"),
        ("Unit/opinfo/add/float32/0",
         f"unknown tier 'Unit' (tiers: {', '.join(tier_names())})"),
    ],
    ids=["empty", "tier-only", "empty-segment", "empty-tier", "trailing-slash", "space", "tab",
         "newline", "unknown-tier"],
)
def test_a_malformed_id_is_refused_in_one_line(text: str, problem: str) -> None:
    with pytest.raises(InputError) as refused:
        parse_test_id(text)
    assert str(refused.value) == f"test id {text!r}: {problem}"
    assert "\n" not in str(refused.value)
    assert find_tier(text) is None


def test_split_checks_the_form_but_not_the_tier() -> None:
    assert str(TestId.split("custom/x/y")) == "custom/x/y"
    with pytest.raises(InputError, match="unknown tier 'custom'"):
        TestId.parse("custom/x/y", ("unit",))
    assert TestId.read("custom/x/y", ("unit",)) is None


def test_the_registry_reads_ids_through_it() -> None:
    tier = find_tier("models/hf/llama/eager")
    assert tier is not None and tier.name == "models"
    assert op_and_dtype("unit/opinfo/nn.functional.linear/float32/3") == (
        "nn.functional.linear", "float32")
    assert op_and_dtype("unit/opinfo/add") is None
    assert op_and_dtype("flows/executorch_xnnpack/opinfo/abs/float32/0") == ("abs", "float32")
