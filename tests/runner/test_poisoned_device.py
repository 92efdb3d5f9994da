"""A poisoned device never blames the tests after it: real ``ckit run``s on simnpu.

- A fatal device error on a zero-size ``mm`` (``poison``, ``empty: true``) after ``mm`` failed
  three times in a row (the zero-size samples, and an autocast policy fault): the breaker used
  to skip the probe, and the later mm tests ran on the poisoned worker, filed FAIL_SEMANTIC
  ``input-modified``. A fatal error now retires its worker before anything else runs there.
- A fatal error hidden inside a passing test (an error-input test passes whatever the device
  raises, ``poison`` included): the next test fails on the garbage, its probe fails, and it is
  judged again on the fresh worker, where it passes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from runner_helpers import records_by_id, run_ckit

from kit.errors import ExitCode

pytestmark = [pytest.mark.slow(seconds=90), pytest.mark.heavy]

pytest.importorskip("simnpu", reason="install the demo vendor: ckit vendors install simnpu")

RUN_TIMEOUT = 900

#: The poisoning scenario: a fatal error on every zero-size mm, and mm wrong under autocast, so
#: that mm has failed three times in a row when its ``empty`` test poisons the device.
MM_POISON: list[dict[str, Any]] = [
    {"op": "mm", "kind": "poison", "empty": True}, {"op": "mm", "kind": "autocast_dtype"}]
MM_SELECT = ["unit/opinfo/mm/bfloat16/*", "unit/opinfo/mul/bfloat16/*"]
#: The tests the poisoned worker used to run and fail: right on a clean device.
AFTER_POISON = [f"unit/opinfo/mm/bfloat16/{name}"
                for name in ("expanded", "large", "method", "noncontiguous", "out")]

#: A fatal error no test reports: amax's empty error input raises (the test passes) and poisons.
HIDDEN_POISON: list[dict[str, Any]] = [{"op": "amax", "kind": "poison", "empty": True}]
HIDDEN_SELECT = ["unit/opinfo/amax/float32/error-*", "unit/opinfo/sub/float32/?"]


def _run(base: Path, rules: list[dict[str, Any]], select: list[str]) -> dict[str, dict[str, Any]]:
    env = {**os.environ, "SIMNPU_FAULTS": json.dumps(rules), "XDG_CONFIG_HOME": str(base / "cfg")}
    out = base / "out"
    selection = [arg for pattern in select for arg in ("--select", pattern)]
    result = run_ckit(
        ["run", "--vendor", "simnpu", "--tier", "unit", *selection, "--no-sign", "--out", str(out)],
        env,
        timeout=RUN_TIMEOUT,
    )
    assert result.returncode in (ExitCode.NOT_CONFORMANT, ExitCode.PARTIAL), result.stderr[-3000:]
    return records_by_id(out)


@pytest.fixture(scope="module")
def mm_poisoned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return _run(tmp_path_factory.mktemp("mm-poisoned"), MM_POISON, MM_SELECT)


@pytest.fixture(scope="module")
def hidden_poison(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return _run(tmp_path_factory.mktemp("hidden-poison"), HIDDEN_POISON, HIDDEN_SELECT)


def test_poisoned_device_never_blames_the_tests_after_it(
    mm_poisoned: dict[str, dict[str, Any]]
) -> None:
    later = {i: mm_poisoned[i]["status"] for i in AFTER_POISON}
    assert set(later.values()) == {"PASS"}, later
    muls = {i: r["status"] for i, r in mm_poisoned.items() if "/mul/" in i}
    assert len(muls) >= 10 and set(muls.values()) == {"PASS"}, muls


def test_a_fatal_device_error_retires_its_worker_even_past_the_breaker(
    mm_poisoned: dict[str, dict[str, Any]]
) -> None:
    poisoning = mm_poisoned["unit/opinfo/mm/bfloat16/empty"]
    assert poisoning["status"] == "ERROR"
    assert "device fatal error" in poisoning["message"]
    assert poisoning["details"]["probe"] == (
        "skipped: a fatal device error retires its worker; new worker")


def test_a_broken_op_still_fails_beside_the_poisoning(
    mm_poisoned: dict[str, dict[str, Any]]
) -> None:
    # Autocast's wrong policy is the op's own: its probe is healthy, its failure stands.
    record = mm_poisoned["unit/opinfo/mm/bfloat16/autocast-bfloat16"]
    assert record["status"] == "FAIL_SEMANTIC"
    assert record["details"]["probe"].startswith("healthy (")
    assert "rejudged" not in record["details"]


def test_a_hidden_fatal_error_never_blames_the_next_test(
    hidden_poison: dict[str, dict[str, Any]]
) -> None:
    statuses = {i: r["status"] for i, r in hidden_poison.items()}
    assert len(statuses) >= 12 and set(statuses.values()) == {"PASS"}, statuses


def test_a_failure_whose_probe_fails_is_judged_again_on_a_fresh_worker(
    hidden_poison: dict[str, dict[str, Any]]
) -> None:
    rejudged = {i: r["details"]["rejudged"] for i, r in hidden_poison.items()
                if "rejudged" in r["details"]}
    assert rejudged, "no failure was judged again"
    for said in rejudged.values():
        assert said.startswith("FAIL_SEMANTIC (InputModified"), said
        assert "on a worker whose probe then failed (unhealthy: " in said
        assert said.endswith("judged again on a fresh worker")
