"""YAML op specs: expansion into stable ids, layouts, determinism, and one-line errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch
import yaml
from unit_helpers import VALID_SPEC, cpu_context, write_spec

from kit.errors import InputError
from kit.standard import load_standard
from kit.tiers.unit.checking import check_case
from kit.tiers.unit.config import load_unit_config
from kit.tiers.unit.opspec_format import InputSpec
from kit.tiers.unit.opspecs import (
    expand,
    find_case,
    load_op_specs,
    make_input,
    opspec_test_ids,
    opspec_unit_case,
)


def test_spec_expands_to_dtypes_times_presets_times_vars(tmp_path: Path) -> None:
    write_spec(tmp_path, "scaled_add.yaml", VALID_SPEC)
    template = load_op_specs(tmp_path)["scaled_add"]
    ids = [case.test_id for case in expand(template)]
    assert ids == [
        f"unit/opspec/scaled_add/{dtype}/{preset}-alpha{alpha}-layout{layout}"
        for dtype in ("float32", "bfloat16")
        for preset in ("small", "odd")
        for alpha in ("1", "0.5")
        for layout in ("contiguous", "transposed")
    ]


def test_case_binds_preset_dims_and_var_values(tmp_path: Path) -> None:
    write_spec(tmp_path, "scaled_add.yaml", VALID_SPEC)
    cases = {c.test_id: c for c in expand(load_op_specs(tmp_path)["scaled_add"])}
    case = cases["unit/opspec/scaled_add/bfloat16/odd-alpha0.5-layouttransposed"]
    assert dict(case.bindings) == {"B": 3, "H": 7, "alpha": 0.5, "layout": "transposed"}


def test_standard_specs_load_and_every_id_finds_its_case() -> None:
    config = load_unit_config(load_standard())
    ids = opspec_test_ids(config)
    assert len(ids) == len(set(ids)) > 100
    for test_id in ids[::37]:
        assert find_case(config, test_id).test_id == test_id


@pytest.mark.parametrize(
    ("layout", "check"),
    [
        ("transposed", lambda t: not t.is_contiguous() and t.stride(-2) == 1),
        ("strided", lambda t: t.stride(-1) == 2),
        ("expanded", lambda t: t.stride(0) == 0),
        ("channels_last", lambda t: t.is_contiguous(memory_format=torch.channels_last)),
    ],
)
def test_layouts_reach_the_call_as_views(layout: str, check: object) -> None:
    spec = InputSpec(("N", "C", "X", "Y"), None, None, None, layout, None)
    bindings = {"N": 2, "C": 3, "X": 4, "Y": 5}
    prepared = make_input(spec, "float32", bindings, torch.Generator().manual_seed(0))
    for upcast in (False, True):
        tensor = prepared.on("cpu", upcast)
        assert tensor.shape == (2, 3, 4, 5)
        assert check(tensor)  # type: ignore[operator]
    # The float64 reference sees exactly the tested values.
    assert torch.equal(prepared.on("cpu", True), prepared.on("cpu", False).double())


def test_inputs_are_seeded_by_id_and_differ_between_ids(tmp_path: Path) -> None:
    write_spec(tmp_path, "scaled_add.yaml", VALID_SPEC)
    cases = expand(load_op_specs(tmp_path)["scaled_add"])
    spec = cases[0].template.inputs[0]

    def draw(seed: int) -> torch.Tensor:
        generator = torch.Generator().manual_seed(seed)
        return make_input(spec, "float32", cases[0].bindings, generator).storage

    assert torch.equal(draw(1), draw(1))
    assert not torch.equal(draw(1), draw(2))


def test_a_standard_spec_case_runs_and_passes_on_cpu() -> None:
    ckit = cpu_context()
    config = load_unit_config(ckit.standard)
    for test_id in (
        "unit/opspec/layer_norm_module/float32/odd-eps1e-05-affineTrue",
        "unit/opspec/conv2d_module/bfloat16/odd-kernel3-stride2-layoutchannels_last",
    ):
        check_case(ckit, opspec_unit_case(config, test_id))


def test_numerics_override_is_applied_and_recorded_with_its_reason(tmp_path: Path) -> None:
    """rotary_embedding's float32 override widens its bound; without it the bound is the
    class's, and each measurement says which one judged it."""
    ckit = cpu_context()
    config = load_unit_config(ckit.standard)
    test_id = "unit/opspec/rotary_embedding/float32/long-base10000-layoutcontiguous"
    [with_override] = check_case(ckit, opspec_unit_case(config, test_id))
    assert "float32" in with_override.bound["override"]

    found = next(d / "transformer_blocks.yaml" for d in config.op_specs_dirs
                 if (d / "transformer_blocks.yaml").exists())
    spec = yaml.safe_load(found.read_text())
    del spec["templates"]["rotary_embedding"]["numerics"]
    write_spec(tmp_path, "transformer_blocks.yaml", yaml.safe_dump(spec))
    changed = dataclasses.replace(config, op_specs_dir=tmp_path)
    [without] = check_case(ckit, opspec_unit_case(changed, test_id))
    assert "override" not in without.bound
    assert without.bound["accumulation"] < with_override.bound["accumulation"]
    assert without.ratio > with_override.ratio


BROKEN_SPECS = {
    "shape_names_unknown_dim": (
        VALID_SPEC.replace("{shape: [H]}", "{shape: [Q]}"),
        "templates.scaled_add.inputs[1].shape",
    ),
    "preset_missing_a_dim": (
        VALID_SPEC.replace("odd: {B: 3, H: 7}", "odd: {B: 3}"),
        "presets.odd",
    ),
    "call_target_outside_torch": (
        VALID_SPEC.replace("call: torch.add", "call: os.system"),
        "templates.scaled_add.call",
    ),
    "call_target_that_does_not_exist": (
        VALID_SPEC.replace("call: torch.add", "call: torch.no_such_function"),
        "templates.scaled_add.call",
    ),
    "module_that_is_not_a_module": (
        VALID_SPEC.replace("call: torch.add", "module: torch.add"),
        "templates.scaled_add.module",
    ),
    "var_value_with_slash_forges_id_segments": (
        VALID_SPEC.replace("alpha: [1.0, 0.5]", "alpha: [1.0, 'x/../y']"),
        "templates.scaled_add.vars.alpha",
    ),
    "var_values_colliding_in_ids": (
        VALID_SPEC.replace("alpha: [1.0, 0.5]", "alpha: [1.0, '1']"),
        "templates.scaled_add.vars.alpha",
    ),
    "unknown_layout": (
        VALID_SPEC.replace("layout: [contiguous, transposed]", "layout: [contiguous, diagonal]"),
        "templates.scaled_add.inputs[0].layout",
    ),
    "unknown_dtype": (
        VALID_SPEC.replace("dtypes: [float32, bfloat16]", "dtypes: [float32, float8]"),
        "templates.scaled_add.dtypes",
    ),
    "case_names_unknown_preset": (
        VALID_SPEC.replace("cases: [small, odd]", "cases: [small, huge]"),
        "templates.scaled_add.cases",
    ),
    "reference_by_name_to_unknown_var": (
        VALID_SPEC.replace("alpha: $alpha", "alpha: $beta"),
        "templates.scaled_add.kwargs",
    ),
    "typo_in_field_name": (
        VALID_SPEC.replace("kwargs: {alpha", "kwarg: {alpha"),
        "templates.scaled_add",
    ),
    "same_dtype_reference_without_why": (
        VALID_SPEC + "    reference: same-dtype\n",
        "templates.scaled_add.why",
    ),
    "numerics_override_without_why": (
        VALID_SPEC + "    numerics: {bfloat16: {ulps: 8}}\n",
        "templates.scaled_add.numerics.bfloat16",
    ),
    "duplicate_yaml_key_silently_overriding": (
        VALID_SPEC.replace(
            "    cases: [small, odd]\n", "    cases: [small, odd]\n    cases: [small]\n"
        ),
        "duplicate key",
    ),
}


@pytest.mark.parametrize("attack", sorted(BROKEN_SPECS))
def test_malformed_spec_is_one_line_error_naming_file_and_field(
    tmp_path: Path, attack: str
) -> None:
    text, field = BROKEN_SPECS[attack]
    path = write_spec(tmp_path, f"{attack}.yaml", text)
    with pytest.raises(InputError) as caught:
        load_op_specs(tmp_path)
    message = str(caught.value)
    assert "\n" not in message
    assert str(path) in message
    assert field in message


def test_template_name_reused_across_files_is_rejected(tmp_path: Path) -> None:
    write_spec(tmp_path, "a.yaml", VALID_SPEC)
    write_spec(tmp_path, "b.yaml", VALID_SPEC)
    with pytest.raises(
        InputError, match=r"b\.yaml: templates\.scaled_add: name already used in a\.yaml"
    ):
        load_op_specs(tmp_path)


def test_unknown_case_id_is_one_line_error() -> None:
    config = load_unit_config(load_standard())
    with pytest.raises(InputError, match="no such op spec case") as caught:
        find_case(config, "unit/opspec/layer_norm_module/float32/huge")
    assert "\n" not in str(caught.value)
