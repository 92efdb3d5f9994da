from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest
from runner_helpers import FAULTY_RUN, FIXTURES, HANG_TIMEOUT_S, records_by_id, run_ckit


@pytest.fixture
def ckit_env(tmp_path: Path) -> dict[str, str]:
    """Environment for a ``ckit`` subprocess: fixture modules importable, private config dir."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(FIXTURES / "python"), *filter(None, [env.get("PYTHONPATH")])]
    )
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    env.pop("CKIT_SIGNING_KEY", None)
    return env


@pytest.fixture(scope="session")
def simnpu_faults_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output directory of one simnpu run with every registered fault scenario's rules
    (``runner_helpers.plant_simnpu_faults``): crashes, hangs and poisonings included."""
    if importlib.util.find_spec("simnpu") is None:
        pytest.skip("install the demo vendor: ckit vendors install simnpu")
    base = tmp_path_factory.mktemp("simnpu-faults")
    env = {**os.environ, "SIMNPU_FAULTS": json.dumps(FAULTY_RUN.faults()),
           "XDG_CONFIG_HOME": str(base / "cfg")}
    out = base / "out"
    result = run_ckit(
        ["run", "--vendor", "simnpu", "--tier", "unit",
         *(arg for select in FAULTY_RUN.tests() for arg in ("--select", select)),
         "--timeout", str(HANG_TIMEOUT_S), "--no-sign", "--out", str(out)],
        env,
        timeout=900,
    )
    assert result.returncode == 1, result.stderr[-3000:]  # the faults fail it: not conformant
    return out


@pytest.fixture(scope="session")
def simnpu_faults_run(simnpu_faults_out: Path) -> dict[str, dict[str, Any]]:
    """The records, by id, of the faulty simnpu run (``simnpu_faults_out``)."""
    return records_by_id(simnpu_faults_out)
