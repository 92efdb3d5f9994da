"""The subtler fault rules: filters on empty inputs, input count and scalar arguments, and the
kinds ``saturate``, ``write_input`` and ``poison_half``.

In-process through ``simnpu.faults.injected``, except ``poison_half``, which wrecks the process
for good and so runs in a fresh interpreter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import simnpu
import torch
from simnpu.faults import FaultConfigError, Kind, parse_rules

DEVICE = "simnpu"
INT32_MAX = 2**31 - 1
INT32_MIN = -(2**31)
#: Generous: the child spends most of it importing torch on a busy 2-core machine.
CHILD_TIMEOUT = 180


def _fires(rules: list[dict], compute) -> bool:
    """Whether the rules changed ``compute()``'s result (or made it raise)."""
    expected = compute().cpu()
    with simnpu.faults.injected(rules):
        try:
            actual = compute().cpu()
        except NotImplementedError:
            return True
    return not torch.equal(actual, expected)


# -- filters ---------------------------------------------------------------------------------


def test_empty_filter_fires_only_when_an_input_is_empty() -> None:
    only_empty = [{"op": "relu", "kind": "missing", "empty": True}]
    never_empty = [{"op": "relu", "kind": "missing", "empty": False}]
    full = torch.randn(3).to(DEVICE)
    empty = torch.randn(0, 3).to(DEVICE)
    assert _fires(only_empty, lambda: torch.relu(empty))
    assert not _fires(only_empty, lambda: torch.relu(full))
    assert _fires(never_empty, lambda: torch.relu(full))
    assert not _fires(never_empty, lambda: torch.relu(empty))


def test_empty_filter_sees_one_empty_input_among_several() -> None:
    rules = [{"op": "cat", "kind": "missing", "empty": True}]
    full = torch.ones(2).to(DEVICE)
    empty = torch.ones(0).to(DEVICE)
    assert _fires(rules, lambda: torch.cat([full, empty, full]))
    assert not _fires(rules, lambda: torch.cat([full, full]))


def test_min_inputs_counts_the_tensors_of_a_list_argument() -> None:
    rules = [{"op": "cat", "kind": "wrong_large", "min_inputs": 4}]
    part = torch.arange(3.0).to(DEVICE)
    assert not _fires(rules, lambda: torch.cat([part] * 3))
    assert _fires(rules, lambda: torch.cat([part] * 4))
    assert _fires(rules, lambda: torch.cat([part] * 5))


def test_min_inputs_counts_plain_tensor_arguments() -> None:
    rules = [{"op": "addcmul", "kind": "wrong_large", "min_inputs": 3}]
    x = torch.ones(3).to(DEVICE)
    assert _fires(rules, lambda: torch.addcmul(x, x, x))
    assert not _fires([{**rules[0], "min_inputs": 4}], lambda: torch.addcmul(x, x, x))


def test_alpha_filter_fires_only_for_that_alpha_positional_or_keyword() -> None:
    rules = [{"op": "add", "kind": "wrong_large", "alpha": 2}]
    x = torch.arange(4.0).to(DEVICE)
    assert _fires(rules, lambda: torch.add(x, x, alpha=2))
    assert _fires(rules, lambda: torch.add(x, x, alpha=2.0))
    assert _fires(rules, lambda: torch.ops.aten.add.Scalar(x, 1, 2))  # alpha positional
    assert not _fires(rules, lambda: x + x)  # alpha left at its default, 1
    assert not _fires(rules, lambda: torch.add(x, x, alpha=3))
    assert not _fires(rules, lambda: torch.ops.aten.add.Scalar(x, 2))


def test_alpha_filter_matches_the_default_when_asked_for_it() -> None:
    x = torch.arange(4.0).to(DEVICE)
    assert _fires([{"op": "add", "kind": "wrong_large", "alpha": 1}], lambda: x + x)


def test_args_filter_names_any_scalar_argument() -> None:
    x = torch.arange(6.0).view(2, 3).to(DEVICE)
    keep = [{"op": "sum", "kind": "wrong_large", "args": {"keepdim": True}}]
    assert _fires(keep, lambda: x.sum(1, keepdim=True))
    assert not _fires(keep, lambda: x.sum(1))
    floor = [{"op": "div", "kind": "wrong_large", "args": {"rounding_mode": "floor"}}]
    assert _fires(floor, lambda: torch.div(x, 4, rounding_mode="floor"))
    assert not _fires(floor, lambda: torch.div(x, 4, rounding_mode="trunc"))
    assert not _fires(floor, lambda: x / 4)


def test_a_boolean_argument_value_never_equals_a_number() -> None:
    x = torch.arange(6.0).view(2, 3).to(DEVICE)
    assert not _fires(
        [{"op": "sum", "kind": "wrong_large", "args": {"keepdim": 1}}],
        lambda: x.sum(1, keepdim=True),
    )


# -- saturate --------------------------------------------------------------------------------


def test_saturate_clamps_an_overflowing_int32_add() -> None:
    a = torch.tensor([INT32_MAX, INT32_MIN, 5, -7], dtype=torch.int32)
    b = torch.tensor([1, -1, 6, 3], dtype=torch.int32)
    wrapping = a + b  # CPU wraps around
    assert wrapping[0] == INT32_MIN and wrapping[1] == INT32_MAX
    with simnpu.faults.injected([{"op": "add", "kind": "saturate", "dtype": "int32"}]):
        actual = (a.to(DEVICE) + b.to(DEVICE)).cpu()
    assert actual.dtype == torch.int32
    assert actual.tolist() == [INT32_MAX, INT32_MIN, 11, -4]


def test_saturate_leaves_results_without_overflow_exact() -> None:
    a = torch.arange(-8, 8, dtype=torch.int32)
    assert not _fires([{"op": "add", "kind": "saturate"}], lambda: a.to(DEVICE) + 3)


def test_saturate_handles_unsigned_int64_and_in_place() -> None:
    rules = [{"op": "add", "kind": "saturate"}, {"op": "sub", "kind": "saturate"},
             {"op": "add_", "kind": "saturate"}]
    small = torch.tensor([250, 3], dtype=torch.uint8).to(DEVICE)
    large = torch.tensor([2**62, 1]).to(DEVICE)
    with simnpu.faults.injected(rules):
        assert (small + small).cpu().tolist() == [255, 6]
        assert (small - 4).cpu().tolist() == [246, 0]
        assert (large + large).cpu().tolist() == [2**63 - 1, 2]
        target = torch.tensor([INT32_MAX, 0], dtype=torch.int32).to(DEVICE)
        returned = target.add_(1)
    assert returned is target
    assert target.cpu().tolist() == [INT32_MAX, 1]


def test_saturate_ignores_floating_and_boolean_results() -> None:
    x = torch.tensor([3.0e38, 1.0]).to(DEVICE)
    flags = torch.tensor([True, False]).to(DEVICE)
    rules = [{"op": "add", "kind": "saturate"}]
    assert not _fires(rules, lambda: x + x)  # float32 overflow stays inf, like CPU
    assert not _fires(rules, lambda: flags + flags)


# -- write_input -----------------------------------------------------------------------------


def test_write_input_returns_the_right_result_but_corrupts_the_first_input() -> None:
    a = torch.tensor([1.0, -2.0, 3.0])
    b = torch.tensor([2.0, 2.0, 2.0])
    a_dev, b_dev = a.to(DEVICE), b.to(DEVICE)
    with simnpu.faults.injected([{"op": "mul", "kind": "write_input"}]):
        result = (a_dev * b_dev).cpu()
    assert torch.equal(result, a * b)
    assert not torch.equal(a_dev.cpu(), a)  # the read-only input was written
    assert torch.equal(b_dev.cpu(), b)  # only the first input


@pytest.mark.parametrize(
    ("dtype", "layout"),
    [(torch.float32, "transposed"), (torch.int64, "contiguous"), (torch.bool, "expanded")],
)
def test_write_input_reaches_every_dtype_and_layout(dtype: torch.dtype, layout: str) -> None:
    base = (torch.arange(6) % 2).to(dtype)
    source = {
        "contiguous": lambda: base.to(DEVICE),
        "transposed": lambda: base.view(2, 3).to(DEVICE).t(),
        "expanded": lambda: base[:1].to(DEVICE).expand(4),
    }[layout]()
    before = source.cpu().clone()
    with simnpu.faults.injected([{"op": "clone", "kind": "write_input"}]):
        copied = source.clone().cpu()
    assert torch.equal(copied, before)
    after = source.cpu()
    assert not torch.equal(after, before)


def test_write_input_leaves_in_place_ops_alone() -> None:
    target = torch.ones(3).to(DEVICE)
    with simnpu.faults.injected([{"op": "mul_", "kind": "write_input"}]):
        target.mul_(2)
    assert target.cpu().tolist() == [2.0, 2.0, 2.0]


# -- poison_half -----------------------------------------------------------------------------

POISON_HALF_THEN_COMPUTE = """
import json, torch, simnpu
a = torch.full((4,), 1.5, dtype=torch.float16, device="simnpu")
try:
    -a
except RuntimeError as exc:
    print(exc)
print(simnpu.faults.is_half_poisoned(), simnpu.faults.is_poisoned())
def check(dtype):
    x = torch.arange(1, 5, dtype=dtype)
    return torch.equal((x.to("simnpu") * 2).cpu(), x * 2)
print(json.dumps({str(d): check(d) for d in
                  (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int32)}))
"""


@pytest.fixture(scope="module")
def half_poisoned_child() -> subprocess.CompletedProcess[str]:
    rules = [{"op": "neg", "kind": "poison_half", "dtype": "float16"}]
    env = {**os.environ, "SIMNPU_FAULTS": json.dumps(rules)}
    return subprocess.run(
        [sys.executable, "-c", POISON_HALF_THEN_COMPUTE],
        env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT,
    )


def test_poison_half_raises_a_fatal_device_error(half_poisoned_child) -> None:
    assert half_poisoned_child.returncode == 0, half_poisoned_child.stderr
    message, flags, _ = half_poisoned_child.stdout.splitlines()
    assert message.startswith("simnpu: device fatal error in aten::neg")
    assert flags == "True False"


def test_poison_half_corrupts_only_half_precision_results(half_poisoned_child) -> None:
    assert half_poisoned_child.returncode == 0, half_poisoned_child.stderr
    exact = json.loads(half_poisoned_child.stdout.splitlines()[-1])
    assert exact == {
        "torch.float16": False,
        "torch.bfloat16": False,
        "torch.float32": True,
        "torch.float64": True,
        "torch.int32": True,
    }


def test_poison_half_does_not_fire_before_its_call() -> None:
    # In-process and harmless: the float32 call does not match the float16-only rule.
    rules = [{"op": "neg", "kind": "poison_half", "dtype": "float16"}]
    with simnpu.faults.injected(rules):
        assert (-torch.ones(2).to(DEVICE)).cpu().tolist() == [-1.0, -1.0]
    assert not simnpu.faults.is_half_poisoned()


# -- configuration ---------------------------------------------------------------------------


def test_new_fields_parse_from_yaml() -> None:
    (empty, inputs, alpha, args) = parse_rules(
        "[{op: relu, kind: abort, empty: true}, {op: cat, kind: hang, min_inputs: 4},"
        " {op: add, kind: wrong_small, alpha: 2},"
        " {op: sum, kind: saturate, args: {keepdim: true, dim: 1}}]"
    )
    assert (empty.op, empty.kind, empty.empty) == ("aten::relu", Kind.ABORT, True)
    assert (inputs.kind, inputs.min_inputs) == (Kind.HANG, 4)
    assert alpha.args == (("alpha", 2),)
    assert args.args == (("dim", 1), ("keepdim", True))
    kinds = parse_rules("[{op: a, kind: saturate}, {op: b, kind: write_input},"
                        " {op: c, kind: poison_half}]")
    assert [rule.kind for rule in kinds] == [Kind.SATURATE, Kind.WRITE_INPUT, Kind.POISON_HALF]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("[{op: relu, kind: abort, empty: yes please}]", "field empty: expected true or false"),
        ("[{op: relu, kind: abort, empty: 0}]", "field empty: expected true or false"),
        ("[{op: cat, kind: hang, min_inputs: -2}]", "field min_inputs: expected a non-negative"),
        ("[{op: cat, kind: hang, min_inputs: 2.5}]", "field min_inputs: expected a non-negative"),
        ("[{op: add, kind: nan, alpha: two}]", "field alpha: expected a number, got 'two'"),
        ("[{op: add, kind: nan, alpha: true}]", "field alpha: expected a number, got True"),
        ("[{op: add, kind: nan, alpha: 2, args: {alpha: 3}}]", "field alpha: given twice"),
        ("[{op: add, kind: nan, args: [alpha, 2]}]", "field args: expected a mapping"),
        ("[{op: add, kind: nan, args: {}}]", "field args: expected a mapping"),
        ("[{op: add, kind: nan, args: {alpha: [1, 2]}}]", "field args.alpha: expected a number"),
        ("[{op: add, kind: nan, args: {2: 1}}]", "field args: expected argument names"),
        ("[{op: add, kind: saturated}]", "field kind: expected one of"),
        ("[{op: flip, kind: fallback, dtype: float32}]", "kind fallback takes no filter"),
    ],
    ids=lambda v: str(v)[:40],
)
def test_malformed_new_fields_are_one_line_errors(value: str, message: str) -> None:
    with pytest.raises(FaultConfigError) as caught:
        parse_rules(value)
    text = str(caught.value)
    assert text.startswith("SIMNPU_FAULTS: rule 0: ")
    assert message in text
    assert "\n" not in text


def test_every_new_kind_is_listed_in_the_error_for_an_unknown_kind() -> None:
    with pytest.raises(FaultConfigError) as caught:
        parse_rules("[{op: add, kind: explode}]")
    for kind in ("saturate", "write_input", "poison_half"):
        assert kind in str(caught.value)


# -- drop_scalar -----------------------------------------------------------------------------


def test_drop_scalar_runs_an_in_place_update_at_the_scalars_default() -> None:
    """AdamW's ``param.addcdiv_(exp_avg, denom, value=-step_size)`` moves by the whole ratio."""
    param = torch.ones(3, device=DEVICE)
    exp_avg, denom = torch.full((3,), 2.0, device=DEVICE), torch.full((3,), 4.0, device=DEVICE)
    with simnpu.faults.injected([{"op": "addcdiv_", "kind": "drop_scalar"}]):
        param.addcdiv_(exp_avg, denom, value=-0.1)
        fresh = torch.addcdiv(torch.ones(3, device=DEVICE), exp_avg, denom, value=-0.1)
    assert param.cpu().tolist() == [1.5, 1.5, 1.5]  # value 1, not -0.1
    assert fresh.cpu().tolist() == pytest.approx([0.95] * 3)  # the out-of-place op is spared


def test_drop_scalar_reaches_a_keyword_alpha_and_leaves_tensors_alone() -> None:
    a, b = torch.ones(2, device=DEVICE), torch.full((2,), 3.0, device=DEVICE)
    assert _fires([{"op": "add", "kind": "drop_scalar"}], lambda: torch.add(a, b, alpha=2))
    assert not _fires([{"op": "add", "kind": "drop_scalar"}], lambda: torch.add(a, b))


# -- ops that return nothing ---------------------------------------------------------------


def test_a_result_kind_on_an_inplace_foreach_op_changes_the_tensors_it_writes() -> None:
    # A foreach optimizer's state update (``_foreach_addcmul_`` returns nothing): the tensors of
    # its ``Tensor(a!)[]`` argument are its results; the eager ``addcmul_`` stays right.
    rules = [{"op": "_foreach_addcmul_", "kind": "wrong_small"}]
    values = torch.rand(4) + 1

    def foreach() -> torch.Tensor:
        written = [values.to(DEVICE), values.to(DEVICE)]
        torch._foreach_addcmul_(written, written, written, 0.5)
        return torch.stack(written)

    def eager() -> torch.Tensor:
        return values.to(DEVICE).addcmul_(values.to(DEVICE), values.to(DEVICE), value=0.5)

    assert _fires(rules, foreach)
    assert not _fires(rules, eager)
