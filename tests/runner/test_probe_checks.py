"""The worker's health probe, run in-process on the real simnpu device with injected faults.

Faults that leave the process intact only (``wrong_*``, ``missing``): the poisoning kinds are
covered end to end, through ``ckit run``, in test_runner_fair_probe.py.
"""

from __future__ import annotations

import pytest

from kit.runner.probe import (
    PROBE_OP_NAMES,
    ProbeFinding,
    ProbeReport,
    implicated,
    probe_device_health,
    probe_dtypes,
    suspect_of,
)

simnpu = pytest.importorskip(
    "simnpu", reason="install the demo vendor: ckit vendors install simnpu"
)

CLAIMED = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
           "uint8", "bool")


def _probe(rules: list[dict], suspects: tuple[str, ...] = ()) -> ProbeReport:
    with simnpu.faults.injected(rules):
        return probe_device_health("simnpu", CLAIMED, suspects)


@pytest.mark.parametrize(
    ("test_id", "suspect"),
    [
        ("unit/opinfo/add/float32/0", "add"),
        ("unit/opinfo/nn.functional.relu/float16/3", "nn.functional.relu"),
        ("unit/opinfo/div.no_rounding_mode/int64/1", "div.no_rounding_mode"),
        ("unit/opspec/matmul_layouts/bfloat16/odd-a_layoutstrided", "matmul_layouts"),
        ("models/hf/gpt2/eager", None),
        ("deploy/imports", None),
    ],
)
def test_the_suspect_comes_from_the_test_id(test_id: str, suspect: str | None) -> None:
    assert suspect_of(test_id) == suspect


def test_suspects_implicate_pool_ops_by_whole_words() -> None:
    assert implicated(["add"]) == {"add"}
    assert implicated(["add_broadcast_both", "mul_broadcast_rank"]) == {"add", "mul"}
    assert implicated(["matmul_layouts"]) == {"mm"}
    assert implicated(["nn.functional.linear"]) == {"mm"}
    assert implicated(["addcmul", "cumsum", "nn.functional.relu"]) == set()


def test_every_claimed_floating_and_integer_dtype_is_checked() -> None:
    names = [str(d).removeprefix("torch.") for d in probe_dtypes(CLAIMED)]
    assert names == ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16",
                     "int8", "uint8"]


def test_a_healthy_device_passes_every_check() -> None:
    report = _probe([])
    assert report.ok, report.message
    # 6 ops in 4 floating dtypes, 5 (no mm) in 5 integer ones; float64 mm is a simnpu gap.
    assert report.checked == 6 * 4 + 5 * 5 - 1
    assert report.message.startswith("healthy (")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_corruption_in_half_precision_alone_is_found(dtype: str) -> None:
    report = _probe([{"op": "add", "kind": "wrong_small", "dtype": dtype}])
    assert not report.ok
    assert report.findings == (ProbeFinding("add", dtype, "differs from CPU"),)
    assert report.message == f"add/{dtype} differs from CPU"


def test_integer_corruption_is_found() -> None:
    report = _probe([{"op": "cat", "kind": "wrong_small", "dtype": "int8"}])
    assert [(f.op, f.dtype) for f in report.findings] == [("cat", "int8")]


def test_the_suspect_op_is_never_used() -> None:
    rules = [{"op": "add", "kind": "wrong_large"}]
    assert not _probe(rules).ok
    avoided = _probe(rules, suspects=("add",))
    assert avoided.ok, avoided.message
    assert avoided.avoided == ("add",)
    assert "avoiding add" in avoided.message


def test_an_opspec_template_rules_out_the_op_it_is_named_for() -> None:
    assert _probe([{"op": "mm", "kind": "wrong_large"}], suspects=("matmul_layouts",)).ok


def test_every_wrong_op_is_named() -> None:
    report = _probe([{"op": "mul", "kind": "wrong_large", "dtype": "float32"},
                     {"op": "sum", "kind": "dtype_change", "dtype": "int32"}])
    assert report.wrong_ops == {"mul", "sum"}
    assert ProbeFinding("sum", "int32", "returned torch.int32 instead of torch.int64") in (
        report.findings
    )


def test_a_missing_kernel_is_an_honest_gap_not_ill_health() -> None:
    report = _probe([{"op": "cat", "kind": "missing"}])
    assert report.ok, report.message


def test_a_device_error_is_fatal_and_ends_the_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    # Real poisoning, in-process: monkeypatch puts the device state back afterwards.
    monkeypatch.setattr(simnpu.faults, "_poisoned", False)
    report = _probe([{"op": "mul", "kind": "poison", "dtype": "float64"}])
    assert report.fatal
    # float32 checks all ran and passed; the first float64 mul raised and nothing after counts.
    assert len(report.findings) == 1
    (finding,) = report.findings
    assert (finding.op, finding.dtype, finding.fatal) == ("mul", "float64", True)
    assert finding.problem.startswith("raised RuntimeError: simnpu: device fatal error")
    assert report.checked == 6 + 1  # float32: all six; float64: add


def test_reports_survive_the_pipe() -> None:
    report = ProbeReport(
        (ProbeFinding("mul", "float16", "differs from CPU"),
         ProbeFinding("add", "bfloat16", "raised RuntimeError: boom", fatal=True)),
        checked=7,
        avoided=("sum",),
    )
    again = ProbeReport.from_json(report.to_json())
    assert again == report
    assert again.fatal and not again.ok
    assert report.to_json()["message"] == (
        "mul/float16 differs from CPU; add/bfloat16 raised RuntimeError: boom"
    )
    assert PROBE_OP_NAMES >= again.wrong_ops
