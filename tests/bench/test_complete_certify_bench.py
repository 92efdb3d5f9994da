"""bench/complete_certify.py (``make bench-certify``) runs and reports: one narrowed cpu run
names its tests, its wall time and its grade (partial), in its line and its JSON; the verdict a
complete run gets from its figures is checked apart, on figures built here (never a timing)."""

from __future__ import annotations

import fnmatch
import json
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow(seconds=15)

REPO_ROOT = Path(__file__).resolve().parents[2]
BENCH = REPO_ROOT / "bench" / "complete_certify.py"
#: A few ids of one op: the whole path of the bench at one run's start-up cost.
SELECT = ("unit/opinfo/abs/float32/0", "unit/opinfo/abs/float32/e*")


@pytest.fixture(scope="module")
def bench() -> types.ModuleType:
    """The benchmark as a module (bench/ on sys.path, as when it runs as a script)."""
    sys.path.insert(0, str(BENCH.parent))
    try:
        import complete_certify
    finally:
        sys.path.remove(str(BENCH.parent))
    return complete_certify


def test_a_narrowed_run_reports_its_tests_time_and_partial_grade(tmp_path: Path) -> None:
    figures = tmp_path / "figures.json"
    done = subprocess.run(
        [sys.executable, str(BENCH), "--vendor", "cpu", "--workers", "1",
         *(arg for pattern in SELECT for arg in ("--select", pattern)),
         "--json", str(figures), "--keep", str(tmp_path / "runs")],
        capture_output=True, text=True, check=False, cwd=REPO_ROOT,
    )
    # Its tests pass, so the grade they earn is conformant: the benchmark's verdict is met.
    assert done.returncode == 0, (done.stdout, done.stderr[-2000:])
    records = json.loads((tmp_path / "runs" / "cpu" / "report.json").read_text())["records"]
    ran = [record["id"] for record in records]
    assert ran and all(any(fnmatch.fnmatchcase(test, p) for p in SELECT) for test in ran), ran
    row = next(line for line in done.stdout.splitlines() if line.startswith("cpu: "))
    assert re.fullmatch(
        rf"cpu: {len(ran)} tests \(unit {len(ran)}\) in \d+\.\d s \(\d+\.\d min\), grade "
        r"non-conformant \(partial: its tests earn conformant\), target <= 20 min "
        r"\(not judged: a narrowed run\)", row), row
    (figure,) = json.loads(figures.read_text())["vendors"]
    assert figure["tests_per_tier"] == {"unit": len(ran)}
    assert figure["wall_s"] > 0 and figure["narrowed"] is True
    assert (figure["grade"], figure["qualifier"], figure["earned"]) == (
        "non-conformant", "partial", "conformant")
    assert (figure["target_met"], figure["met"]) == (None, True)


@pytest.mark.parametrize(("grade", "wall_minutes", "met"), [
    ("conformant", 19.0, True),
    ("conformant", 21.0, False),  # over the cpu target
    ("conformant-with-exceptions", 1.0, False),  # fast, but not the grade asked for
])
def test_a_complete_run_is_judged_by_its_target_and_grade(
        bench: types.ModuleType, grade: str, wall_minutes: float, met: bool) -> None:
    figure = bench.CertifyFigure(
        vendor="cpu", wall_s=wall_minutes * 60, tests_per_tier={"unit": 3}, grade=grade,
        qualifier=None, earned=None, target_s=bench.TARGET_MINUTES["cpu"] * 60,
        narrowed=False, run_exit_code=0)
    assert figure.met is met
    assert ("MISSED" in figure.row()) is (wall_minutes > bench.TARGET_MINUTES["cpu"])


def test_a_vendor_without_a_target_is_refused_in_one_line() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--vendor", "cppnpu"],
                          capture_output=True, text=True, check=False, cwd=REPO_ROOT)
    assert done.returncode == 2 and done.stdout == ""
    assert "invalid choice: 'cppnpu'" in done.stderr.splitlines()[-1]
