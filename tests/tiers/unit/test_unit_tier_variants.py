"""Full sample coverage and variants: what they hold and that ids keep naming the same inputs
(the kernel faults OpInfo's tame samples missed, caught on a real device:
tests/runner/test_simnpu_subtle_faults.py)."""

from __future__ import annotations

import copy
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from unit_helpers import REGENERATES_THE_UNIT_TIER, cpu_context

from kit.cli import main
from kit.errors import InputError
from kit.standard import load_standard
from kit.standard.catalogue import standard_directory
from kit.tiers.unit.cases import run_unit_case, unit_case
from kit.tiers.unit.config import load_unit_config, parse_unit_config
from kit.tiers.unit.identity import DIGEST_LENGTH, unit_test_digest
from kit.tiers.unit.opinfo_cases import parse_opinfo_id, sample_indices, selected_positions
from kit.tiers.unit.samples import opinfo_samples, place_exact
from kit.tiers.unit.trees import TORCH_DTYPES, tensor_leaves
from kit.tiers.unit.variants.extremes import EXTREME_SPAN

pytestmark = pytest.mark.slow(seconds=70)

pytest.importorskip("torch.testing._internal.common_methods_invocations")

STANDARD = load_standard()
CONFIG = load_unit_config(STANDARD)
LOCKED = STANDARD.test_ids("unit")


def variant_ids(name: str) -> list[str]:
    return [i for i in LOCKED if i.startswith("unit/opinfo/") and i.endswith(f"/{name}")]


def cpu_inputs(test_id: str, upcast: bool = False) -> Any:
    return unit_case(STANDARD, test_id).make_inputs("cpu", upcast)


def tensors(test_id: str) -> list[torch.Tensor]:
    return [t for _, t in tensor_leaves(cpu_inputs(test_id))]


# --- which samples run ------------------------------------------------------------------------


def test_every_sample_runs_except_for_spread_ops_and_the_variants_only_ops() -> None:
    spread = CONFIG.coverage.spread_samples
    locked = set(LOCKED)
    for entry in CONFIG.ops:
        for dtype in entry.dtypes:
            count = len(opinfo_samples(entry, dtype))
            positions = selected_positions(CONFIG, entry, dtype)
            if entry.key in CONFIG.coverage.variants_only:
                assert positions == ()  # the conversion ops run their convert samples alone
            elif entry.key in CONFIG.coverage.spread_ops:
                assert len(positions) == min(count, spread)
                assert set(sample_indices(count, 4)) <= set(positions)  # the first lock's ids
            else:
                assert positions == tuple(range(count))
            assert {f"unit/opinfo/{entry.key}/{dtype}/{i}" for i in positions} <= locked


def test_the_alpha_2_sample_of_add_is_run_now() -> None:
    samples = opinfo_samples(CONFIG.op("add"), "float32")
    alpha_2 = [i for i, s in enumerate(samples) if s.kwargs.get("alpha") == 2]
    assert alpha_2 and not set(alpha_2) & set(sample_indices(len(samples), 4))
    assert {f"unit/opinfo/add/float32/{i}" for i in alpha_2} <= set(LOCKED)


# --- what each variant holds ------------------------------------------------------------------


def test_empty_variants_hold_an_empty_tensor_where_cpu_accepts_one() -> None:
    ids = variant_ids("empty")
    assert "unit/opinfo/nn.functional.relu/float32/empty" in ids and len(ids) > 600
    for test_id in ids:
        assert any(t.numel() == 0 for t in tensors(test_id)), test_id
    # torch.max without dim refuses an empty input on CPU, so the standard has no such test.
    assert "unit/opinfo/max.reduction_no_dim/float32/empty" not in LOCKED
    with pytest.raises(RuntimeError):
        torch.max(torch.empty(0, 3))


def test_noncontiguous_variants_keep_their_strides_in_the_reference_and_upcast_runs() -> None:
    ids = variant_ids("noncontiguous")
    assert "unit/opinfo/mm/float32/noncontiguous" in ids and len(ids) > 600
    for test_id in ids:
        plain, wide = tensors(test_id), [t for _, t in tensor_leaves(cpu_inputs(test_id, True))]
        assert any(not t.is_contiguous() for t in plain), test_id
        assert [t.stride() for t in plain] == [t.stride() for t in wide], test_id
    # cat's OpInfo samples already hand the device a transposed input: no variant needed.
    assert "unit/opinfo/cat/float32/noncontiguous" not in LOCKED


def test_a_transposed_strided_input_reaches_the_device_with_its_layout() -> None:
    (matrix, other), _ = cpu_inputs("unit/opinfo/mm/float32/noncontiguous")
    assert matrix.stride()[0] < matrix.stride()[1]  # column-major
    assert min(matrix.stride()) == 2  # a gap after every element
    device = "simnpu" if importlib.util.find_spec("simnpu") else "cpu"
    if device == "simnpu":
        import simnpu  # noqa: F401 - registers the device
    placed = place_exact(matrix, device, upcast=False)
    assert placed.device.type == device
    assert placed.stride() == matrix.stride()
    assert placed.storage_offset() == matrix.storage_offset()
    assert torch.equal(placed.cpu(), matrix)


def test_expanded_variants_give_the_input_a_zero_stride() -> None:
    ids = variant_ids("expanded")
    assert "unit/opinfo/add/float32/expanded" in ids and len(ids) > 300
    for test_id in ids:
        first = tensors(test_id)[0]
        assert 0 in first.stride() and first.numel() > 1, test_id


@pytest.mark.parametrize(
    ("test_id", "length_of"),
    [
        ("unit/opinfo/sum/float32/large", lambda a, k: a[0].shape[k["dim"]]),
        ("unit/opinfo/cumsum/int64/large", lambda a, k: a[0].shape[a[1]]),
        ("unit/opinfo/mm/bfloat16/large", lambda a, k: a[0].shape[-1]),
        ("unit/opinfo/nn.functional.conv2d/float16/large", lambda a, k: a[1].shape[1]),
        ("unit/opinfo/nn.functional.linear/float32/large", lambda a, k: a[1].shape[-1]),
    ],
)
def test_large_variants_reduce_or_contract_over_at_least_256(test_id: str, length_of: Any) -> None:
    args, kwargs = cpu_inputs(test_id)
    assert length_of(args, kwargs) >= 256
    assert len(variant_ids("large")) > 100


def test_every_large_variant_has_a_dimension_of_at_least_256() -> None:
    for test_id in variant_ids("large"):
        assert max(max(t.shape, default=0) for t in tensors(test_id)) >= 256, test_id


def test_extremes_hold_integer_limits_and_make_cpu_add_wrap() -> None:
    ids = variant_ids("extremes")
    assert {"unit/opinfo/add/int32/extremes", "unit/opinfo/sum/int64/extremes"} <= set(ids)
    for test_id in ids:
        info = torch.iinfo(TORCH_DTYPES[parse_opinfo_id(test_id).dtype])
        values = torch.cat([t.reshape(-1).long() for t in tensors(test_id)])
        assert bool((values < info.min + EXTREME_SPAN).any()), test_id
        assert bool((values > info.max - EXTREME_SPAN).any()), test_id
    (a, b), _ = cpu_inputs("unit/opinfo/add/int32/extremes")
    exact, wrapped = a.long() + b.long(), torch.add(a, b).long()
    overflowed = exact != wrapped
    assert bool(overflowed.any())  # a saturating kernel differs exactly there
    assert bool(((exact - wrapped)[overflowed].abs() == 2**32).all())


@pytest.mark.parametrize("count", [1, 4, 9, 130])
@pytest.mark.parametrize("op", ["cat", "stack"])
def test_arity_variants_pass_that_many_distinct_inputs(op: str, count: int) -> None:
    inputs = cpu_inputs(f"unit/opinfo/{op}/float32/arity{count}")[0][0]
    assert len(inputs) == count
    assert len({t.sum().item() for t in inputs}) == count  # fresh values for each


def test_variants_pass_on_cpu_in_process() -> None:
    ckit = cpu_context()
    for test_id in (
        "unit/opinfo/nn.functional.relu/float32/empty",
        "unit/opinfo/mm/float32/noncontiguous",
        "unit/opinfo/add/float32/expanded",
        "unit/opinfo/nn.functional.linear/bfloat16/large",
        "unit/opinfo/add/int32/extremes",
        "unit/opinfo/cat/bool/arity130",
    ):
        run_unit_case(ckit, test_id)


# --- ids ---------------------------------------------------------------------------------------


def test_variant_ids_parse_and_forged_ones_are_one_line_errors() -> None:
    assert parse_opinfo_id("unit/opinfo/cat/float32/arity4").sample == "arity4"
    assert parse_opinfo_id("unit/opinfo/add/float32/9").sample == 9
    for forged in (
        "unit/opinfo/add/float32/Empty",
        "unit/opinfo/add/float32/em pty",
        "unit/opinfo/add/float32/[0]",
        "unit/opinfo/add/float32/-1",
    ):
        with pytest.raises(InputError) as caught:
            parse_opinfo_id(forged)
        assert "\n" not in str(caught.value)
    with pytest.raises(InputError, match="no such sample"):
        run_unit_case(cpu_context(), "unit/opinfo/add/float32/bogus")
    with pytest.raises(InputError, match="no such sample"):  # declared, but CPU refuses it
        run_unit_case(cpu_context(), "unit/opinfo/max.reduction_no_dim/float32/empty")


DIGESTED = [
    "unit/opinfo/add/int32/extremes",
    "unit/opinfo/sum/float16/large",
    "unit/opinfo/cat/int64/arity9",
    "unit/opinfo/mm/bfloat16/noncontiguous",
    "unit/opinfo/nn.functional.relu/float32/empty",
    "unit/opinfo/add/float32/9",
    "unit/opspec/layer_norm_module/float32/odd-eps1e-05-affineTrue",
]


def test_variants_are_identical_in_a_fresh_process() -> None:
    here = [unit_test_digest(STANDARD, test_id) for test_id in DIGESTED]
    code = (
        "import random, torch; torch.rand(7); random.random()\n"  # other draws happen first
        "from kit.standard import load_standard\n"
        "from kit.tiers.unit.identity import unit_test_digest\n"
        f"print([unit_test_digest(load_standard(), i) for i in {DIGESTED!r}])"
    )
    there = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    ).stdout.strip()
    assert there == repr(here)


def test_the_locked_list_records_each_tests_input_digest() -> None:
    path = STANDARD.test_list_path("unit")
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    pairs = [line.split(" ") for line in lines]
    assert all(len(p) == 2 and len(p[1]) == DIGEST_LENGTH for p in pairs)
    assert [p[0] for p in pairs] == LOCKED  # test_ids returns the bare ids
    digests = dict(pairs)
    for test_id in DIGESTED:
        assert digests[test_id] == unit_test_digest(STANDARD, test_id)


@REGENERATES_THE_UNIT_TIER
@pytest.mark.heavy  # a regeneration of the whole unit tier
def test_lock_refuses_an_id_whose_regenerated_inputs_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(standard_directory().parent, tmp_path / "standards")
    monkeypatch.setenv("CKIT_HOME", str(tmp_path))
    copied = load_standard()
    unit_yaml = copied.tier_file("unit")
    text = unit_yaml.read_text()
    assert text.count("length: 300") == 1
    unit_yaml.write_text(text.replace("length: 300", "length: 301"))  # every large id changes
    locked_list = copied.test_list_path("unit")
    locked = locked_list.read_text()

    # The refusal comes before `--check` and writing part (kit.cli.standard_lock.lock_tiers):
    # the writing lock, which has something to lose, shows it (a second whole regeneration
    # for `--check` cost the heavy suite about 75 s).
    assert main(["standard", "lock", "--tier", "unit"]) == 3
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1
    first_large = next(i for i in LOCKED if i.endswith("/large"))
    assert f"test {first_large} (and " in error and "now names other inputs" in error
    assert locked_list.read_text() == locked  # nothing written, not even a list of its own
    assert copied.own_test_list_path("unit").exists() == (copied.own_test_list_path("unit")
                                                          == locked_list)


# --- coverage section errors -------------------------------------------------------------------

SOURCE = Path("/standards/v1/unit.yaml")
VALID: dict[str, Any] = {
    "coverage": {
        "spread": {"samples": 25, "ops": ["add"]},
        "groups": {"sums": ["sum"]},
        "variants": {
            "empty": {"ops": ["all_ops"]},
            "large": {"length": 300, "dims": {"sums": ["dim"]}},
            "extremes": {"dtypes": ["int64"], "ops": ["add"]},
            "arity4": {"ops": ["cat"]},
        },
    },
    "ops": [
        {"op": "add", "dtypes": ["float32", "int64"]},
        {"op": "sum", "dtypes": ["float32"]},
        {"op": "cat", "dtypes": ["float32"]},
    ],
}


def broken(change: Any) -> dict[str, Any]:
    data = copy.deepcopy(VALID)
    change(data["coverage"])
    return data


BROKEN_COVERAGE = {
    "unknown_variant": (
        broken(lambda c: c["variants"].update(jumbo={"ops": ["add"]})),
        "coverage.variants.jumbo: unknown variant",
    ),
    "op_not_in_the_tier": (
        broken(lambda c: c["variants"]["empty"].update(ops=["mul"])),
        "coverage.variants.empty.ops: 'mul' is neither an op",
    ),
    "extremes_on_floats": (
        broken(lambda c: c["variants"]["extremes"].update(dtypes=["float32"])),
        "coverage.variants.extremes.dtypes: extremes needs integer dtypes",
    ),
    "large_without_length": (
        broken(lambda c: c["variants"]["large"].pop("length")),
        "coverage.variants.large.length",
    ),
    "large_dim_not_a_dimension": (
        broken(lambda c: c["variants"]["large"].update(dims={"sum": ["K"]})),
        "coverage.variants.large.dims.sum: expected one entry per operand",
    ),
    "group_named_like_an_op": (
        broken(lambda c: c["groups"].update(add=["sum"])),
        "coverage.groups.add: the name is taken",
    ),
    "spread_of_one": (
        broken(lambda c: c["spread"].update(samples=1)),
        "coverage.spread.samples",
    ),
    "typo_in_a_variant_field": (
        broken(lambda c: c["variants"]["arity4"].update(opps=["cat"])),
        "coverage.variants.arity4: unknown field 'opps'",
    ),
}


@pytest.mark.parametrize("attack", sorted(BROKEN_COVERAGE))
def test_malformed_coverage_is_one_line_error_naming_the_field(attack: str) -> None:
    data, field = BROKEN_COVERAGE[attack]
    with pytest.raises(InputError) as caught:
        parse_unit_config(data, SOURCE)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{SOURCE}: {field}")


def test_coverage_declarations_expand_groups_and_all_ops() -> None:
    coverage = parse_unit_config(VALID, SOURCE).coverage
    assert coverage.samples_cap("add") == 25 and coverage.samples_cap("sum") is None
    assert [r.name for r in coverage.variants_of("add", "int64")] == ["empty", "extremes"]
    assert [r.name for r in coverage.variants_of("add", "float32")] == ["empty"]
    assert [r.name for r in coverage.variants_of("sum", "float32")] == ["empty", "large"]
    large = coverage.variants_of("sum", "float32")[1]
    assert large.grown_dims("sum") == ("dim",) and large.size == 300
    assert [r.size for r in coverage.variants_of("cat", "float32")] == [0, 4]
