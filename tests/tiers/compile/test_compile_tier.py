"""The compile tier end to end: one real ``ckit run`` of cpu (Inductor) and one of simnpu (its
own dynamo backend, a wrong decomposition planted), each narrowed to a few compile ids, read by
every test; the kit's own decisions (an unclaimed backend, a claimed name dynamo does not know)
asked in this process. A compile that never ends is a heavy test of its own
(``test_compile_never_ends.py``), whose short limit no legitimate compile has to fit in."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kit.outcomes import verdict_of
from kit.pytest_plugin import build_context
from kit.results import Status
from kit.standard import load_standard
from kit.tiers.registry import kit_inapplicable
from kit.vendors import load_vendor

# Heavy: Inductor compiles in a fresh cache (every pytest session has its own TMPDIR).
pytestmark = [pytest.mark.slow(seconds=60), pytest.mark.heavy]

ARGMIN = "compile/opinfo/argmin/float32/0"
RSQRT = "compile/opinfo/rsqrt/float32/0"
#: simnpu's backend decomposes rsqrt wrongly; eager rsqrt is untouched.
WRONG_DECOMPOSITION = [{"op": "rsqrt", "kind": "wrong_decomposition"}]


def ckit_run(tmp: Path, vendor: str, tiers: list[str], selects: list[str],
             faults: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The records of ``ckit run`` of ``vendor`` (unsigned), by id."""
    out = tmp / f"out-{vendor}"
    env = {**os.environ, "SIMNPU_FAULTS": json.dumps(faults),
           "XDG_CONFIG_HOME": str(tmp / "config")}
    args = ["--tier", ",".join(tiers), *(a for s in selects for a in ("--select", s))]
    done = subprocess.run(
        [sys.executable, "-m", "kit", "run", "--vendor", vendor, *args, "--workers", "1",
         "--no-sign", "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    assert (out / "report.json").exists(), done.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    return {r["id"]: r for r in report["records"]}


@pytest.fixture(scope="module")
def on_cpu(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return ckit_run(tmp_path_factory.mktemp("compile-cpu"), "cpu", ["compile"],
                    [ARGMIN, RSQRT], [])


@pytest.fixture(scope="module")
def on_simnpu(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return ckit_run(tmp_path_factory.mktemp("compile-simnpu"), "simnpu", ["compile"], [RSQRT],
                    WRONG_DECOMPOSITION)


def facts(record: dict[str, Any]) -> dict[str, Any]:
    """The one claimed backend's facts (``details.compile``)."""
    (only,) = record["details"]["compile"]
    return dict(only)


def test_inductor_passes_with_one_graph_no_break_and_one_recompile(
        on_cpu: dict[str, dict[str, Any]]) -> None:
    for test_id in (ARGMIN, RSQRT):
        record = on_cpu[test_id]
        assert record["status"] == "PASS", record["message"]
        assert facts(record) == {"backend": "inductor", "graphs": 1, "graph_breaks": 0,
                                 "recompiles": 1, "stage": None}
        assert record["details"]["max_rel_err"] < 1e-6  # judged against float64 CPU


def test_a_wrong_decomposition_is_a_numeric_failure_while_eager_stays_right(
        on_simnpu: dict[str, dict[str, Any]]) -> None:
    compiled = on_simnpu[RSQRT]
    assert compiled["status"] == "FAIL_NUMERIC", compiled["message"]
    assert compiled["details"]["max_rel_err"] > 1e-3
    import torch
    from simnpu import faults

    values = torch.rand(64) + 0.5
    with faults.injected(WRONG_DECOMPOSITION):
        eager = torch.rsqrt(values.to("simnpu")).cpu()
    assert torch.equal(eager, torch.rsqrt(values))


def test_simnpu_backend_compiled_its_graphs_and_its_graph_breaks_are_recorded(
        on_simnpu: dict[str, dict[str, Any]]) -> None:
    found = facts(on_simnpu[RSQRT])  # kept on the failing record too
    # dynamo traces into the Python of simnpu's tensor and breaks its graph there: a fact
    # recorded, not judged.
    assert found["backend"] == "simnpu" and found["graphs"] >= 1 and found["graph_breaks"] > 0
    assert found["recompiles"] >= 1 and found["stage"] is None


def test_a_vendor_claiming_no_backend_is_not_applicable_with_the_kits_reason() -> None:
    # every vendor the kit carries claims one (cpu inductor); a profile without the key, none
    cpu = load_vendor("cpu")
    found = kit_inapplicable(load_standard(), replace(cpu, compile_backends=()), RSQRT)
    assert found is not None and found.reason == "unclaimed-compile-backend"
    assert found.words == "vendor cpu claims no torch.compile backend"
    assert kit_inapplicable(load_standard(), cpu, RSQRT) is None


def test_a_claimed_backend_dynamo_does_not_know_is_one_line_error_at_lookup() -> None:
    from kit.tiers.compile.cases import run_compile_case

    ckit = build_context("cpu", dt.date(2026, 11, 29))
    ckit = replace(ckit, vendor=replace(ckit.vendor, compile_backends=("no_such_backend",)))
    with pytest.raises(Exception) as raised:
        run_compile_case(ckit, RSQRT)
    verdict = verdict_of(raised.value, ckit.notes)
    assert verdict.status is Status.ERROR
    assert "no dynamo backend named 'no_such_backend'" in verdict.message
    assert "\n" not in verdict.message
    assert verdict.details["compile"] == [{"backend": "no_such_backend", "graphs": 0,
                                           "graph_breaks": 0, "recompiles": None,
                                           "stage": "lookup"}]


def _sine_case() -> Any:
    """A unit case of ``torch.sin`` built by hand: no OpInfo to import for it."""
    import torch

    from kit.tiers.unit.checking import UnitCase
    from kit.tiers.unit.entries import Comparison

    return UnitCase("sin", "float32", Comparison(),
                    lambda device, upcast: ((torch.ones(4, device=device),), {}),
                    lambda device, upcast, inputs: torch.sin(*inputs[0]))


def _failing_compiler(graph: Any, example_inputs: Any) -> Any:
    raise RuntimeError("lowering failed: no kernel template for aten::sin")


def test_a_backend_compiler_that_raises_is_error_at_the_backend_stage() -> None:
    from torch._dynamo.backends.registry import register_backend

    from kit.tiers.compile.compiled import claimed_backends, compiled_evidence

    register_backend(_failing_compiler, name="ckit_test_failing_compiler")
    ckit = build_context("cpu", dt.date(2026, 11, 29))
    ckit = replace(ckit, vendor=replace(ckit.vendor,
                                        compile_backends=("ckit_test_failing_compiler",)))
    with pytest.raises(Exception) as raised:
        compiled_evidence(ckit, claimed_backends(ckit), _sine_case(), None)
    verdict = verdict_of(raised.value, ckit.notes)
    # ERROR, not UNSUPPORTED, though the backend's words read "no kernel": the compile failed.
    assert verdict.status is Status.ERROR
    assert verdict.message.startswith("CompileFailure: torch.compile with backend "
                                      "'ckit_test_failing_compiler' failed at the backend stage")
    assert "lowering failed" in verdict.message
    (facts_noted,) = verdict.details["compile"]
    assert facts_noted["stage"] == "backend" and facts_noted["graphs"] == 0
