"""The worker health probe is fair, shown by real ``ckit run``s on simnpu with injected faults.

- Half precision alone poisoned (``poison_half``, in the suite's shared faulty simnpu run): the
  fatal device error retires the worker before anything else runs there, so later
  half-precision tests of other ops pass. (That the probe checks every claimed dtype, which a
  float32-only probe would not, is ``test_probe_checks.py``'s.)
- ``add`` broken for every input: the probe never relies on the op under suspicion, so the run
  does not restart a worker per failing test; the add tests still fail and the others pass,
  and every failure is probed (no breaker stops the check that tells an op from a device).
- ``add`` and ``mul`` broken: the probe after an add failure finds mul wrong, the worker is
  replaced once, mul is found wrong on the fresh worker too (a broken kernel, not device state)
  and later probes leave it out; the add failure, in doubt after that failed probe, is judged
  again on the fresh worker and fails there too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from planting_helpers import matching
from runner_helpers import plant_simnpu_faults, records_by_id, run_ckit

from kit.errors import ExitCode

pytestmark = [pytest.mark.slow(seconds=100), pytest.mark.heavy]

pytest.importorskip("simnpu", reason="install the demo vendor: ckit vendors install simnpu")

RUN_TIMEOUT = 900

POISONED = "unit/opinfo/neg/float16/0"
HALF_LATER = [
    "unit/opinfo/sin/float16/*",
    "unit/opinfo/sub/bfloat16/*",
    "unit/opinfo/tanh/float16/*",
    "unit/opinfo/sigmoid/bfloat16/*",
]
#: Ops whose tests do not use add on the device.
ADD_FREE = ["abs", "neg", "sin", "exp"]
#: A few dtypes of add keep the run short (every sample and variant of each runs).
ADD_DTYPES = ["float32", "bfloat16", "int64"]


def _run(base: Path, rules: list[dict[str, Any]], select: list[str]) -> Path:
    env = {**os.environ, "SIMNPU_FAULTS": json.dumps(rules), "XDG_CONFIG_HOME": str(base / "cfg")}
    out = base / "out"
    selection = [arg for pattern in select for arg in ("--select", pattern)]
    result = run_ckit(
        ["run", "--vendor", "simnpu", "--tier", "unit", *selection, "--no-sign",
         "--out", str(out)],
        env,
        timeout=RUN_TIMEOUT,
    )
    # Narrowed: never conformant; partial when its few failures still meet a lower grade.
    assert result.returncode in (ExitCode.NOT_CONFORMANT, ExitCode.PARTIAL), result.stderr[-3000:]
    return out


def _worker_starts(out: Path) -> int:
    return len(list((out / "workers").glob("worker-*.log")))


def _ids(records: dict[str, dict[str, Any]], op: str) -> list[str]:
    return sorted(test_id for test_id in records if test_id.split("/")[2] == op)


def _with_values(records: dict[str, dict[str, Any]], op: str) -> list[str]:
    """The op's tests with a non-empty result: a zero-size result (the ``empty`` variant, an
    OpInfo sample with a zero dimension) has no value a broken kernel can get wrong, so those
    pass whatever the kernel does."""
    return [i for i in _ids(records, op) if records[i]["details"].get("numel") != 0]


plant_simnpu_faults([{"op": "neg", "kind": "poison_half", "dtype": "float16"}],
                    [POISONED, *HALF_LATER])


#: OpInfo's own samples (positions of one or two digits), not the standard's variants: the
#: probe's fairness is about ops, and v2's call forms reach other overloads.
SAMPLES = ("?", "??")


@pytest.fixture(scope="module")
def add_broken(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rules = [{"op": "add", "kind": "wrong_large"}]
    select = [*(f"unit/opinfo/add/{dtype}/{n}" for dtype in ADD_DTYPES for n in SAMPLES),
              *(f"unit/opinfo/{op}/float32/{n}" for op in ADD_FREE for n in SAMPLES)]
    return _run(tmp_path_factory.mktemp("add-broken"), rules, select)


@pytest.fixture(scope="module")
def add_and_mul_broken(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rules = [{"op": "add", "kind": "wrong_large"}, {"op": "mul", "kind": "wrong_large"}]
    select = [f"unit/opinfo/{key}/{n}" for key in ("add/float32", "add/float64", "neg/float32",
                                                    "neg/int64") for n in SAMPLES]
    return _run(tmp_path_factory.mktemp("add-mul-broken"), rules, select)


# -- half precision poisoned -----------------------------------------------------------------


def test_the_half_poisoning_test_itself_errors(
    simnpu_faults_run: dict[str, dict[str, Any]]
) -> None:
    record = simnpu_faults_run[POISONED]
    assert record["status"] == "ERROR"
    assert "device fatal error" in record["message"]


def test_the_half_poisoning_test_retires_its_worker(
    simnpu_faults_run: dict[str, dict[str, Any]]
) -> None:
    verdict = simnpu_faults_run[POISONED]["details"]["probe"]
    assert verdict == "skipped: a fatal device error retires its worker; new worker"


def test_later_half_precision_tests_of_other_ops_pass(
    simnpu_faults_run: dict[str, dict[str, Any]]
) -> None:
    # They run on the replaced worker: the poisoned one would fail them.
    later = {i: r["status"] for i, r in matching(simnpu_faults_run, HALF_LATER).items()}
    assert len(later) >= 8
    assert set(later.values()) == {"PASS"}, later


# -- add broken for every input --------------------------------------------------------------


def test_every_add_test_still_fails(add_broken: Path) -> None:
    records = records_by_id(add_broken)
    add_ids = _with_values(records, "add")
    assert len(add_ids) >= 20
    assert {records[i]["status"] for i in add_ids} == {"FAIL_NUMERIC"}


def test_tests_that_do_not_use_add_pass(add_broken: Path) -> None:
    records = records_by_id(add_broken)
    others = {i: records[i]["status"] for op in ADD_FREE for i in _ids(records, op)}
    assert len(others) >= len(ADD_FREE)  # every add-free op, in its own samples
    assert set(others.values()) == {"PASS"}, others


def test_a_broken_add_costs_few_worker_restarts(add_broken: Path) -> None:
    assert _worker_starts(add_broken) <= 3


def test_no_breaker_skips_the_probe(add_broken: Path) -> None:
    records = records_by_id(add_broken)
    verdicts = [records[i]["details"]["probe"] for i in _with_values(records, "add")]
    assert all(v.startswith("healthy (") and "avoiding add" in v for v in verdicts), verdicts
    assert not any("rejudged" in records[i]["details"] for i in records)  # healthy: no doubt


# -- a probe op broken too -------------------------------------------------------------------


def test_a_broken_probe_op_costs_one_restart(add_and_mul_broken: Path) -> None:
    records = records_by_id(add_and_mul_broken)
    add_ids = _with_values(records, "add")
    first = records[add_ids[0]]["details"]
    assert first["rejudged"].startswith("FAIL_NUMERIC (")  # judged again on the fresh worker
    assert "whose probe then failed (unhealthy: mul/float32 differs from CPU" in first["rejudged"]
    assert _worker_starts(add_and_mul_broken) == 2
    later = [records[i]["details"]["probe"] for i in add_ids]
    assert all(v.startswith("healthy (") for v in later), later
    assert all("mul" in v for v in later if v.startswith("healthy ("))  # left out of the probe


def test_no_record_is_reclassified(add_and_mul_broken: Path) -> None:
    records = records_by_id(add_and_mul_broken)
    assert {records[i]["status"] for i in _with_values(records, "add")} == {"FAIL_NUMERIC"}
    assert {records[i]["status"] for i in _ids(records, "neg")} == {"PASS"}
