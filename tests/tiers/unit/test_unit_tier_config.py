"""unit.yaml validation (one-line errors naming file and field) and stable id round trips."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from kit.errors import InputError
from kit.standard import load_standard
from kit.tiers.unit.config import load_unit_config, parse_unit_config
from kit.tiers.unit.opinfo_cases import (
    OpinfoCaseId,
    opinfo_test_ids,
    parse_opinfo_id,
    sample_indices,
    selected_positions,
)
from kit.tiers.unit.variants.interface import rule_of_segment

SOURCE = Path("/standards/v1/unit.yaml")
VALID: dict[str, Any] = {
    "ops": [
        {"op": "add", "dtypes": ["float32", "int64"]},
        {"op": "max", "variant": "reduction_with_dim", "dtypes": ["float32"]},
    ],
}


def broken(change: Any) -> dict[str, Any]:
    data = copy.deepcopy(VALID)
    change(data)
    return data


BROKEN_CONFIGS = {
    "unknown_dtype_smuggled_in": (
        broken(lambda d: d["ops"][0]["dtypes"].append("float8")),
        "ops.0 (add).dtypes",
    ),
    "same_dtype_reference_without_why": (
        broken(lambda d: d["ops"][0].update(reference="same-dtype")),
        "ops.0 (add).why",
    ),
    "unknown_reference_kind": (
        broken(lambda d: d["ops"][0].update(reference="float128")),
        "ops.0 (add).reference",
    ),
    "numerics_override_without_why": (
        broken(lambda d: d["ops"][0].update(numerics={"float32": {"ulps": 8}})),
        "ops.0 (add).numerics.float32.why",
    ),
    "negative_ulps": (
        broken(
            lambda d: d["ops"][0].update(numerics={"float32": {"ulps": -1, "why": "x"}})
        ),
        "ops.0 (add).numerics.float32.ulps",
    ),
    "accumulation_in_an_unknown_dtype": (
        broken(
            lambda d: d["ops"][0].update(
                numerics={"float32": {"accumulation_dtype": "float8", "why": "x"}}
            )
        ),
        "ops.0 (add).numerics.float32.accumulation_dtype",
    ),
    "same_op_listed_twice": (broken(lambda d: d["ops"].append(dict(d["ops"][0]))), "ops"),
    "typo_in_field_name": (
        broken(lambda d: d["ops"][1].update(varaint="x")), "ops.1 (max).varaint: unknown key"
    ),
    "retired_max_samples_per_case": (
        broken(lambda d: d.update(max_samples_per_case=4)),
        "max_samples_per_case: unknown key; the keys here are ops, coverage, op_specs",
    ),
    "compare_outputs_not_positions": (
        broken(lambda d: d["ops"][1].update(compare_outputs="values", why="ties")),
        "ops.1 (max).compare_outputs",
    ),
    "sweep_names_a_variant_the_coverage_lacks": (
        broken(lambda d: d.update(sweep={"samples": 2, "variants": ["method"]})),
        "sweep.variants.0",
    ),
    "sweep_excludes_an_op_of_the_unit_list": (
        broken(lambda d: d.update(sweep={"samples": 2, "variants": [], "excluded": [
            {"reason": "complex result", "ops": ["add"], "why": "w"}]})),
        "sweep.excluded.0: 'add' is in the unit list",
    ),
    "sweep_excludes_one_op_for_two_reasons": (
        broken(lambda d: d.update(sweep={"samples": 2, "variants": [], "excluded": [
            {"reason": "a", "ops": ["fft.fft"], "why": "w"},
            {"reason": "b", "ops": ["fft.fft"], "why": "w"}]})),
        "sweep.excluded.1: 'fft.fft' is excluded already, as 'a'",
    ),
    "sweep_op_narrowed_without_why": (
        broken(lambda d: d.update(sweep={"samples": 2, "variants": [], "ops": {
            "acos": {"dtypes": ["float64"]}}})),
        "sweep.ops.acos.why",
    ),
}


@pytest.mark.parametrize("attack", sorted(BROKEN_CONFIGS))
def test_malformed_unit_config_is_one_line_error(attack: str) -> None:
    data, field = BROKEN_CONFIGS[attack]
    with pytest.raises(InputError) as caught:
        parse_unit_config(data, SOURCE)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{SOURCE}: {field}")


def test_op_missing_from_op_db_is_one_line_error() -> None:
    config = parse_unit_config(
        broken(lambda d: d["ops"].append({"op": "no_such_op", "dtypes": ["float32"]})), SOURCE
    )
    with pytest.raises(InputError, match="no OpInfo named 'no_such_op'"):
        opinfo_test_ids(config)


def test_dtype_the_opinfo_does_not_support_on_cpu_is_rejected() -> None:
    config = parse_unit_config(
        broken(lambda d: d["ops"].append({"op": "bitwise_and", "dtypes": ["float32"]})), SOURCE
    )
    with pytest.raises(InputError, match="bitwise_and: OpInfo does not support float32 on CPU"):
        opinfo_test_ids(config)


def test_variant_is_part_of_the_op_segment() -> None:
    config = parse_unit_config(VALID, SOURCE)
    assert [op.key for op in config.ops] == ["add", "max.reduction_with_dim"]
    assert config.op("max.reduction_with_dim").variant == "reduction_with_dim"


def test_opinfo_ids_round_trip_through_op_dtype_and_sample_index() -> None:
    config = load_unit_config(load_standard())
    ids = [i for i in load_standard().test_ids("unit") if i.startswith("unit/opinfo/")]
    for test_id in ids[::23]:
        case = parse_opinfo_id(test_id)
        entry = config.op(case.op_key)
        assert case.dtype in entry.dtypes
        if isinstance(case.sample, int):
            assert case.sample in selected_positions(config, entry, case.dtype)
        else:
            rules = config.coverage.variants_of(entry.key, case.dtype)
            assert rule_of_segment(case.sample, rules) is not None  # promotion-int64, error-4
        assert str(OpinfoCaseId(entry.key, case.dtype, case.sample)) == test_id


@pytest.mark.parametrize(
    ("count", "expected"),
    [(1, [0]), (4, [0, 1, 2, 3]), (5, [0, 1, 3, 4]), (58, [0, 19, 38, 57])],
)
def test_samples_are_spread_over_the_opinfo_samples(count: int, expected: list[int]) -> None:
    assert sample_indices(count, 4) == expected


def _with_attribution(attribution: object) -> dict[str, Any]:
    return {"ops": [{"op": "add", "dtypes": ["float32"]}], "attribution": attribution}


def test_the_standard_names_its_native_ops_by_overload_and_says_why() -> None:
    source = Path("u.yaml")
    required = {"native_required": ["aten::where.self", "aten::mm"], "why": "w"}
    config = parse_unit_config(_with_attribution(required), source)
    assert config.attribution is not None
    assert config.attribution.native_required == ("aten::where.self", "aten::mm")
    assert parse_unit_config({"ops": [{"op": "add", "dtypes": ["float32"]}]}, source
                             ).attribution is None
    with pytest.raises(InputError, match=r"^u.yaml: attribution.why: say why"):
        parse_unit_config(_with_attribution({"native_required": ["aten::mm"]}), source)
    with pytest.raises(InputError, match=r"^u.yaml: attribution.native_required.0: expected an "
                                         r"ATen overload"):
        parse_unit_config(_with_attribution({"native_required": ["where"], "why": "w"}), source)
