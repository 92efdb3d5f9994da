"""The README's C++ backend block as written, in a fresh clone of the kit: cppnpu installed
(compiled where its sources are not installed yet), validated, add's tests run clean and then
with ``CPPNPU_FAULTS=add``, whose float32 tests fail numerically.

In ``make test-full``: CI's heavy suite builds cppnpu into a fresh venv and runs narrower runs of
its own (``tests/vendors/test_vendors_cppnpu.py``); this block's two runs add about half a minute
of CPU beside them. The block runs under ``bash -u`` without ``-e``: its clean run is narrowed,
so it exits ``PARTIAL`` (12), and the faulty run after it exits non-conformant (1), the block's
own exit code; every command's outcome is checked in what it wrote.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from readme_clone import fresh_clone, readme_block

from kit.errors import ExitCode

pytestmark = [pytest.mark.slow(seconds=240), pytest.mark.full]

if shutil.which("g++") is None:
    pytest.skip("cppnpu is C++: g++ is needed to build it", allow_module_level=True)

CPP_HEADING = "## Certify a C++ backend"


def _records(run: Path) -> dict[str, dict[str, Any]]:
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    return {record["id"]: record for record in report["records"]}


def test_the_cpp_backend_block_runs_as_written(tmp_path: Path) -> None:
    kit = fresh_clone(tmp_path / "kit")
    env = {k: v for k, v in os.environ.items() if k != "CPPNPU_FAULTS"}
    done = subprocess.run(["bash", "-u", "-c", readme_block(CPP_HEADING)], cwd=kit, env=env,
                          capture_output=True, text=True, timeout=1800, check=False)

    assert done.returncode == ExitCode.NOT_CONFORMANT, done.stdout[-2000:] + done.stderr[-3000:]
    said = done.stdout.splitlines()
    assert any(line.startswith("OK cppnpu: ") for line in said)  # installed and imported
    assert "OK cppnpu" in said  # validated
    clean = _records(kit / "results" / "cppnpu")
    assert any(i.startswith("unit/opinfo/add/float32/") for i in clean)
    assert {r["status"] for r in clean.values()} <= {"PASS", "NOT_APPLICABLE"}, clean
    faulty = _records(kit / "results" / "cppnpu-faulty")
    failed = [i for i, r in faulty.items() if r["status"] == "FAIL_NUMERIC"]
    assert failed and all(i.startswith("unit/opinfo/add/float32/") for i in faulty)
