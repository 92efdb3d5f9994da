"""Attacks on the worker's result pipe cost only the attacking test (one real ``ckit run``).

A line that is not JSON and a flood without a newline are that test's ERROR and a fresh
worker; a worker that aborts while a ``setsid`` child it started still holds the pipe is a
CRASH, not a TIMEOUT. The run finishes with a report, and the tests after each attack pass.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from runner_helpers import FIXTURES, records_by_id, run_ckit

pytestmark = pytest.mark.slow(seconds=50)

VENDOR = str(FIXTURES / "vendors" / "pipe-attacks")
#: Long enough that a crash taken for silence would show as TIMEOUT.
TIMEOUT_S = 120

# (attack, its test, the status it must get)
ATTACKS = [
    ("line_that_is_not_json", "unit/opinfo/neg/float32/0", "ERROR"),
    ("300_mb_without_a_newline", "unit/opinfo/sigmoid/float32/0", "ERROR"),
    ("setsid_child_holds_the_pipe_after_a_crash", "unit/opinfo/tanh/float32/0", "CRASH"),
]
#: Sorted after each attack's test: each runs on the worker that replaced the attacked one.
AFTER = [
    "unit/opinfo/round/float32/0",
    "unit/opinfo/sin/float32/0",
    "unit/opinfo/where/float32/0",
]


@pytest.fixture(scope="module")
def attacked_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("pipe-attacks")
    env = {**os.environ, "XDG_CONFIG_HOME": str(base / "cfg")}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(FIXTURES / "python"), *filter(None, [env.get("PYTHONPATH")])]
    )
    tests = [test_id for _, test_id, _ in ATTACKS] + AFTER
    out = base / "out"
    result = run_ckit(
        ["run", "--vendor", VENDOR, "--tier", "unit",
         *(arg for test_id in tests for arg in ("--select", test_id)),
         "--timeout", str(TIMEOUT_S), "--no-sign", "--out", str(out)],
        env,
        timeout=900,
    )
    assert result.returncode == 1, result.stderr[-3000:]
    return records_by_id(Path(out))


@pytest.mark.parametrize(
    ("test_id", "expected"), [(t, s) for _, t, s in ATTACKS], ids=[a for a, _, _ in ATTACKS]
)
def test_pipe_attack_costs_only_its_own_test(
    attacked_run: dict[str, Any], test_id: str, expected: str
) -> None:
    record = attacked_run[test_id]
    assert record["status"] == expected, record["message"]
    if expected == "ERROR":
        assert "protocol" in record["message"]


def test_crash_is_seen_at_once_not_at_the_deadline(attacked_run: dict[str, Any]) -> None:
    record = attacked_run["unit/opinfo/tanh/float32/0"]
    assert record["details"]["signal"] == "SIGABRT"


@pytest.mark.parametrize("test_id", AFTER)
def test_tests_after_the_attacks_pass(attacked_run: dict[str, Any], test_id: str) -> None:
    assert attacked_run[test_id]["status"] == "PASS", attacked_run[test_id]["message"]
