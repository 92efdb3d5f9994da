"""Fault rules that leave the process alive, run in-process through ``simnpu.faults.injected``.

Crashes, hangs, poisoning and the ``SIMNPU_FAULTS`` environment variable itself are covered by
test_simnpu_faults_process.py, in subprocesses.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import simnpu
import torch
from simnpu.faults import FaultConfigError, Kind, parse_rules

from kit.numerics.judging import assert_close
from kit.outcomes import NumericMismatch
from kit.tiers.unit.checking import unit_bound

DEVICE = "simnpu"


def _device_sum(dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    """(device result of a + b, exact host result) for a small fixed input."""
    a = torch.linspace(-2, 2, 12, dtype=dtype).view(3, 4)
    b = torch.full((3, 4), 0.5, dtype=dtype)
    return (a.to(DEVICE) + b.to(DEVICE)).cpu(), a + b


def _fires(rules: list[dict], compute) -> bool:
    """Whether a ``wrong_large`` rule (the unmistakable kind) changed ``compute()``'s result."""
    expected = compute().cpu()
    with simnpu.faults.injected(rules):
        actual = compute().cpu()
    return not torch.equal(actual, expected)


def test_no_rules_are_active_by_default() -> None:
    assert simnpu.faults.active_rules() == ()
    assert not simnpu.faults.is_poisoned()
    actual, expected = _device_sum()
    assert torch.equal(actual, expected)


def test_wrong_small_is_just_outside_the_tolerance() -> None:
    with simnpu.faults.injected([{"op": "add", "kind": "wrong_small"}]):
        actual, expected = _device_sum()
    with pytest.raises(NumericMismatch) as caught:
        assert_close(actual, expected, unit_bound("compound"))
    assert caught.value.max_rel_err < 0.1


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16"])
def test_wrong_small_defaults_exceed_half_precision_tolerances(dtype_name: str) -> None:
    dtype = getattr(torch, dtype_name)
    with simnpu.faults.injected([{"op": "add", "kind": "wrong_small"}]):
        actual, expected = _device_sum(dtype)
    with pytest.raises(NumericMismatch):
        assert_close(actual, expected.double(), unit_bound("compound"))


def test_wrong_large_is_far_off() -> None:
    with simnpu.faults.injected([{"op": "aten::add.Tensor", "kind": "wrong_large"}]):
        actual, expected = _device_sum()
    relative = (actual - expected).abs() / expected.abs()
    assert (relative >= 9.9).all()


def test_magnitude_sets_the_perturbation() -> None:
    with simnpu.faults.injected([{"op": "add", "kind": "wrong_small", "magnitude": 0.5}]):
        actual, expected = _device_sum()
    pushed = expected.sign() * expected.abs().clamp_min(0.1)
    assert torch.allclose(actual, expected + 0.5 * pushed)


def test_nan_poisons_exactly_one_element() -> None:
    with simnpu.faults.injected([{"op": "add", "kind": "nan"}]):
        actual, expected = _device_sum()
    assert int(actual.isnan().sum()) == 1
    finite = ~actual.isnan()
    assert torch.equal(actual[finite], expected[finite])


def test_dtype_change_silently_returns_float16() -> None:
    with simnpu.faults.injected([{"op": "add", "kind": "dtype_change"}]):
        result = torch.ones(3, device=DEVICE) + torch.ones(3, device=DEVICE)
    assert result.device.type == DEVICE
    assert result.dtype == torch.float16
    assert result.cpu().dtype == torch.float16


def test_missing_raises_like_a_missing_kernel() -> None:
    with simnpu.faults.injected([{"op": "aten::mm", "kind": "missing"}]):
        with pytest.raises(
            NotImplementedError, match="aten::mm: kernel not implemented for 'simnpu'"
        ):
            torch.ones(2, 2, device=DEVICE) @ torch.ones(2, 2, device=DEVICE)


def test_slow_delays_then_computes_right() -> None:
    with simnpu.faults.injected([{"op": "add", "kind": "slow", "seconds": 0.2}]):
        started = time.monotonic()
        actual, expected = _device_sum()
        elapsed = time.monotonic() - started
    assert torch.equal(actual, expected)
    assert elapsed >= 0.2  # a lower bound only: sleep guarantees it


def test_factory_ops_are_judged_by_their_outputs() -> None:
    # empty() has no tensor inputs: it comes through the PrivateUse1 fallback, filtered on outputs.
    rules = [{"op": "aten::empty.memory_format", "kind": "missing", "min_numel": 10}]
    with simnpu.faults.injected(rules):
        assert torch.empty(3, device=DEVICE).shape == (3,)
        with pytest.raises(NotImplementedError, match="aten::empty.memory_format"):
            torch.empty(10, device=DEVICE)


def test_overload_rule_leaves_other_overloads_alone() -> None:
    x = torch.arange(4.0, device=DEVICE)
    assert not _fires(
        [{"op": "aten::add.Tensor", "kind": "wrong_large"}], lambda: torch.ops.aten.add.Scalar(x, 1)
    )
    assert _fires([{"op": "add", "kind": "wrong_large"}], lambda: torch.ops.aten.add.Scalar(x, 1))
    assert _fires([{"op": "aten::add", "kind": "wrong_large"}], lambda: x + x)
    assert not _fires([{"op": "add", "kind": "wrong_large"}], lambda: x * x)


def test_dtype_filter_fires_only_for_that_dtype() -> None:
    rules = [{"op": "add", "kind": "wrong_large", "dtype": "float16"}]
    half = torch.ones(4, dtype=torch.float16, device=DEVICE)
    single = torch.ones(4, device=DEVICE)
    assert _fires(rules, lambda: half + half)
    assert not _fires(rules, lambda: single + single)


def test_noncontiguous_filter_fires_only_on_noncontiguous_inputs() -> None:
    base = torch.randn(4, 6).to(DEVICE)
    strided = base.t()
    assert not strided.is_contiguous()
    only_strided = [{"op": "add", "kind": "wrong_large", "noncontiguous": True}]
    only_dense = [{"op": "add", "kind": "wrong_large", "noncontiguous": False}]
    assert _fires(only_strided, lambda: strided + 1)
    assert not _fires(only_strided, lambda: base + 1)
    assert _fires(only_dense, lambda: base + 1)
    assert not _fires(only_dense, lambda: strided + 1)


def test_min_numel_filter_fires_only_on_large_inputs() -> None:
    rules = [{"op": "add", "kind": "wrong_large", "min_numel": 100}]
    small = torch.ones(99, device=DEVICE)
    large = torch.ones(100, device=DEVICE)
    assert not _fires(rules, lambda: small + 1)
    assert _fires(rules, lambda: large + 1)


def test_in_place_results_are_corrupted_in_place() -> None:
    target = torch.zeros(3, device=DEVICE)
    with simnpu.faults.injected([{"op": "add_", "kind": "wrong_large"}]):
        returned = target.add_(1)
    assert returned is target
    assert (target.cpu() > 10).all()


def test_rules_are_restored_after_the_block() -> None:
    with simnpu.faults.injected([{"op": "add", "kind": "nan"}]) as rules:
        assert rules[0].kind is Kind.NAN
        assert "fault injection: 1 rule" in torch.simnpu.get_device_name(0)
    assert simnpu.faults.active_rules() == ()
    assert torch.simnpu.get_device_name(0) == "SimNPU-1 (pure Python)"


# -- configuration ---------------------------------------------------------------------------


def test_rules_parse_from_json_and_yaml() -> None:
    from_json = parse_rules('[{"op": "aten::add.Tensor", "kind": "nan", "dtype": "float32"}]')
    from_yaml = parse_rules("- op: aten::add.Tensor\n  kind: nan\n  dtype: float32\n")
    assert from_json == from_yaml
    assert from_json[0].dtype == torch.float32
    flow = parse_rules("[{op: mm.default, kind: slow, seconds: 2, min_numel: 8}]")
    assert (flow[0].op, flow[0].seconds, flow[0].min_numel) == ("aten::mm", 2.0, 8)


def test_rules_parse_from_a_file(tmp_path: Path) -> None:
    rules_file = tmp_path / "rules.yaml"
    rules_file.write_text("- {op: mul, kind: wrong_small, noncontiguous: true}\n", encoding="utf-8")
    (rule,) = parse_rules(f"@{rules_file}")
    assert (rule.op, rule.kind, rule.noncontiguous) == ("aten::mul", Kind.WRONG_SMALL, True)


@pytest.mark.parametrize("value", [None, "", "  ", "[]", "null"])
def test_unset_or_empty_config_means_no_faults(value: str | None) -> None:
    assert parse_rules(value) == ()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("[{op: add, kind: nan", "not valid JSON or YAML"),
        ('{"op": "add", "kind": "nan"}', "expected a list of rules, got a single mapping"),
        ('"add"', "expected a list of rules, got str"),
        ("[42]", "rule 0: expected a mapping"),
        ("[{kind: nan}]", "rule 0: missing required field 'op'"),
        ("[{op: add}]", "rule 0: missing required field 'kind'"),
        ("[{op: add, kind: nan}, {op: add, kind: explode}]", "rule 1: field kind: expected one of"),
        ("[{op: add, kind: nan, probability: 0.5}]", "rule 0: unknown field 'probability'"),
        ("[{op: add, kind: nan, dtype: float33}]", "rule 0: field dtype"),
        (
            "[{op: add, kind: nan, min_numel: -1}]",
            "field min_numel: expected a non-negative integer",
        ),
        (
            "[{op: add, kind: nan, min_numel: 2.5}]",
            "field min_numel: expected a non-negative integer",
        ),
        ("[{op: add, kind: slow, seconds: soon}]", "field seconds: expected a non-negative number"),
        (
            "[{op: add, kind: nan, noncontiguous: maybe}]",
            "field noncontiguous: expected true or false",
        ),
        ("[{op: '', kind: nan}]", "field op: expected an op name"),
        ("@/nonexistent/simnpu-rules.yaml", "cannot read rules file"),
    ],
    ids=lambda v: str(v)[:40],
)
def test_malformed_config_is_a_one_line_error(value: str, message: str) -> None:
    with pytest.raises(FaultConfigError) as caught:
        parse_rules(value)
    text = str(caught.value)
    assert text.startswith("SIMNPU_FAULTS: ")
    assert message in text
    assert "\n" not in text


def test_a_failed_injection_leaves_the_rules_untouched() -> None:
    with pytest.raises(FaultConfigError):
        with simnpu.faults.injected([{"op": "add", "kind": "bogus"}]):
            pass
    assert simnpu.faults.active_rules() == ()


def test_overwrite_grad_replaces_the_accumulated_gradient_but_not_add_itself() -> None:
    rule = [{"op": "aten::add_.Tensor", "kind": "overwrite_grad"}]
    x = torch.ones(3, device=DEVICE, requires_grad=True)
    with simnpu.faults.injected(rule):
        for factor in (2.0, 3.0):
            (x * factor).sum().backward()
        added = torch.ones(3, device=DEVICE).add_(torch.ones(3, device=DEVICE))
    assert x.grad is not None and x.grad.cpu().tolist() == [3.0] * 3  # not 2 + 3
    assert added.cpu().tolist() == [2.0] * 3


def test_autocast_dtype_swaps_the_policy_of_one_op_under_autocast_only() -> None:
    a = torch.ones(2, 2, device=DEVICE)
    with simnpu.faults.injected([{"op": "mm", "kind": "autocast_dtype"}]):
        with torch.autocast(DEVICE, dtype=torch.bfloat16):
            lowered, other = torch.mm(a, a), torch.bmm(a[None], a[None])
        plain = torch.mm(a.bfloat16(), a.bfloat16())
    assert (lowered.dtype, other.dtype, plain.dtype) == (
        torch.float32, torch.bfloat16, torch.bfloat16)
