"""The kit's detection power, shown on the real simnpu device: one injected fault per kind.

One ``ckit run`` on simnpu with ten fault rules, each on its own op; the table says which
status the kit must give that op's test. A control op with no fault must pass, also right after
the crash, the hang and the device poisoning (fresh or probed workers stop the damage).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from runner_helpers import records_by_id, run_ckit

pytestmark = pytest.mark.slow(seconds=55)

pytest.importorskip("simnpu", reason="install the demo vendor: ckit vendors install simnpu")

# (fault kind, op it is injected into, expected status)
TABLE = [
    ("wrong_small", "mul", "FAIL_NUMERIC"),
    ("wrong_large", "sub", "FAIL_NUMERIC"),
    ("nan", "neg", "FAIL_NUMERIC"),
    ("dtype_change", "abs", "FAIL_SEMANTIC"),
    ("abort", "sin", "CRASH"),
    ("segfault", "cos", "CRASH"),
    ("hang", "tanh", "TIMEOUT"),
    ("missing", "sqrt", "UNSUPPORTED"),
    ("slow", "exp", "PASS"),
    ("poison", "log", "ERROR"),
]
CONTROLS = ["add", "log1p"]  # log1p runs right after the poisoning
SLOW_SECONDS = 2.0
#: A hang is waited for this long: ample for one small op on a loaded machine.
TIMEOUT_S = 10


def _test_id(op: str) -> str:
    return f"unit/opinfo/{op}/float32/0"


@pytest.fixture(scope="module")
def faulty_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    import os

    base = tmp_path_factory.mktemp("simnpu-faults")
    rules: list[dict[str, Any]] = [
        {"op": op, "kind": kind, "dtype": "float32"} for kind, op, _ in TABLE
    ]
    for rule in rules:
        if rule["kind"] == "slow":
            rule["seconds"] = SLOW_SECONDS
    env = {**os.environ, "SIMNPU_FAULTS": json.dumps(rules), "XDG_CONFIG_HOME": str(base / "cfg")}
    ops = [op for _, op, _ in TABLE] + CONTROLS
    selection = [arg for op in ops for arg in ("--select", _test_id(op))]
    out = base / "out"
    result = run_ckit(
        ["run", "--vendor", "simnpu", "--tier", "unit", *selection, "--timeout", str(TIMEOUT_S),
         "--no-sign", "--out", str(out)],
        env,
        timeout=900,
    )
    assert result.returncode == 1, result.stderr[-3000:]
    return records_by_id(Path(out))


@pytest.mark.parametrize(("kind", "op", "expected"), TABLE, ids=[k for k, _, _ in TABLE])
def test_injected_fault_is_classified(
    faulty_run: dict[str, dict[str, Any]], kind: str, op: str, expected: str
) -> None:
    record = faulty_run[_test_id(op)]
    assert record["status"] == expected, record["message"]
    if kind == "slow":
        assert record["duration_s"] >= SLOW_SECONDS
    if kind == "abort":
        assert record["details"]["signal"] == "SIGABRT"
    if kind == "segfault":
        assert record["details"]["signal"] == "SIGSEGV"
    if kind in ("wrong_small", "wrong_large", "nan"):
        assert record["details"]["mismatched"] > 0
    if kind == "dtype_change":
        assert "dtype" in record["message"]


@pytest.mark.parametrize("op", CONTROLS)
def test_faults_do_not_spread_to_other_tests(
    faulty_run: dict[str, dict[str, Any]], op: str
) -> None:
    assert faulty_run[_test_id(op)]["status"] == "PASS"
