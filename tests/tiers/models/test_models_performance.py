"""The model tier's performance figures: measured after the judged call, recorded, compared.

Two real ``ckit run``s of one model on simnpu (module-scoped), the second with a fault rule that
sleeps in ``relu``: both records carry figures, ``ckit show`` prints the table and ``ckit diff``
flags that model slower. The rest drive the measurement itself on the CPU, in process.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import torch
from models_helpers import cpu_context, write_vendor

from kit.cli import main
from kit.errors import ExitCode, InputError
from kit.report.read import read_report
from kit.results import PERFORMANCE_KEY
from kit.tiers.models.cases import find_case
from kit.tiers.models.interface import BuiltModel
from kit.tiers.models.measure import measure_model, time_calls
from kit.tiers.models.performance import TIMED_ITERATIONS, Host, PerformanceFigures
from kit.vendors import load_vendor
from kit.views.comment import comment_lines
from kit.views.performance import PerformanceChange
from kit.views.show import show_view

# The tests of the two real runs (about 48 s of CPU, nearly all of it the runs' start-up) are
# heavy, so that `make test` keeps its budget; the in-process tests stay in it.

MODEL = "models/hf/resnet/eager"
#: Each of resnet's relu calls sleeps this long in the second run: several times its forward.
SLEEP_S = 0.03
REPORTED_PEAK = 3 * 2**20


def reported_peak() -> int:
    """A profile's memory hook (named by its dotted path in the test's profile)."""
    return REPORTED_PEAK


def _ckit(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kit", *args], env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    pytest.importorskip("simnpu", reason="install the demo vendor: ckit vendors install simnpu")
    base = tmp_path_factory.mktemp("performance")
    env = {k: v for k, v in os.environ.items() if k != "SIMNPU_FAULTS"}
    slow = [{"op": "relu", "kind": "slow", "seconds": SLEEP_S}]
    runs = []
    for name, faults in (("a", None), ("b", slow)):
        run_env = {**env, "XDG_CONFIG_HOME": str(base / "cfg")}
        if faults is not None:
            run_env["SIMNPU_FAULTS"] = json.dumps(faults)
        out = base / name
        done = _ckit(["run", "--vendor", "simnpu", "--tier", "models", "--select", MODEL,
                      "--no-sign", "--out", str(out)], run_env)
        assert (out / "report.json").is_file(), done.stderr[-3000:]
        runs.append(out)
    return runs[0], runs[1]


def _record(run: Path) -> dict[str, Any]:
    report = json.loads((run / "report.json").read_text())
    (record,) = [r for r in report["records"] if r["id"] == MODEL]
    return record


@pytest.mark.heavy
@pytest.mark.slow(seconds=60)
def test_both_runs_record_figures_of_the_passing_model(two_runs: tuple[Path, Path]) -> None:
    for run in two_runs:
        record = _record(run)
        assert record["status"] == "PASS", record["message"]
        figures = PerformanceFigures.from_json(record["details"][PERFORMANCE_KEY])
        assert len(figures.latencies_s) >= 4
        assert figures.kind == "inference" and figures.batch == 2
        assert figures.synchronize == "torch.simnpu.synchronize"
        # simnpu keeps no memory statistics: said so, nothing else changes.
        assert figures.peak_memory_bytes is None and figures.memory == "not reported"
        assert figures.host.device_count == 1 and figures.host.threads >= 1


@pytest.mark.heavy
@pytest.mark.slow(seconds=60)
def test_diff_flags_the_slowed_model(
    two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = two_runs
    # Figures are recorded, not graded: the same statuses, no regression exit.
    assert main(["diff", str(a), str(b)]) == ExitCode.OK
    shown = capsys.readouterr().out
    assert "1 flagged of 1" in shown
    line = next(x for x in shown.splitlines() if x.strip().startswith(MODEL))
    assert line.endswith(" slower"), line
    main(["diff", str(a), str(b), "--json"])
    (change,) = json.loads(capsys.readouterr().out)["performance"]
    assert change["flag"] == "slower" and change["ratio"] > 2, change


@pytest.mark.heavy
@pytest.mark.slow(seconds=60)
def test_show_prints_the_figures_table(
    two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    main(["show", str(two_runs[1])])
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("performance (model tier"))
    table = lines[start:start + 5]
    # The host the report's environment describes: the fault rule's note is not the device's.
    assert table[1].endswith("1 simnpu device(s) (SimNPU-1 (pure Python)) (the report's "
                             "environment)"), table[1]
    assert table[3].split() == ["test", "status", "latency", "spread", "throughput", "peak",
                                "memory"]
    assert table[4].split()[:2] == [MODEL, "PASS"] and table[4].endswith("not reported")


@pytest.mark.heavy
@pytest.mark.slow(seconds=60)
def test_the_comment_shows_the_slowed_model_against_its_baseline(
    two_runs: tuple[Path, Path],
) -> None:
    a, b = (read_report(run) for run in two_runs)
    lines = comment_lines(show_view(b, 10), a, 10)
    start = next(i for i, x in enumerate(lines) if x.startswith("Model performance against"))
    assert lines[start].endswith("1 flagged.")
    assert lines[start + 1].startswith(f"- `{MODEL}` **slower**: x"), lines[start + 1]


@pytest.mark.heavy
@pytest.mark.slow(seconds=60)
def test_the_baseline_run_times_every_call(two_runs: tuple[Path, Path]) -> None:
    figures = PerformanceFigures.from_json(_record(two_runs[0])["details"][PERFORMANCE_KEY])
    assert len(figures.latencies_s) == TIMED_ITERATIONS and not figures.capped


def test_a_model_past_the_time_cap_is_recorded_capped() -> None:
    latencies, capped = time_calls(lambda: time.sleep(0.02), None, cap_s=0.07)
    assert capped and 0 < len(latencies) < TIMED_ITERATIONS


def _tiny_model() -> tuple[Any, BuiltModel]:
    case = find_case(cpu_context().standard, MODEL)
    return case, BuiltModel(torch.nn.Linear(4, 2), (torch.ones(3, 4),))


def test_the_profiles_memory_hook_is_read() -> None:
    ckit = cpu_context()
    vendor = dataclasses.replace(
        ckit.vendor, max_memory_allocated=f"{__name__}.{reported_peak.__name__}")
    case, built = _tiny_model()
    figures = measure_model(built, case, vendor, 1)
    assert figures.peak_memory_bytes == REPORTED_PEAK and figures.batch == 3
    assert PerformanceFigures.from_json(figures.to_json()) == figures


def test_a_synchronize_the_device_lacks_is_one_line_not_a_verdict() -> None:
    vendor = dataclasses.replace(cpu_context().vendor, synchronize="torch.cpu.no_such_call")
    case, built = _tiny_model()
    figures = measure_model(built, case, vendor, 1)
    assert figures.latencies_s == () and figures.problem is not None
    assert "torch.cpu.no_such_call" in figures.problem and "\n" not in figures.problem


def test_forged_figures_are_refused_in_one_line() -> None:
    case, built = _tiny_model()
    data = measure_model(built, case, cpu_context().vendor, 1).to_json()
    forged = {**data, "latencies_s": [-1.0]}
    with pytest.raises(InputError, match="latencies_s: expected a list of seconds"):
        PerformanceFigures.from_json(forged)
    with pytest.raises(InputError, match="expected an object of exactly"):
        PerformanceFigures.from_json({**data, "extra": 1})


def _figures(latencies: list[float], cpu_model: str = "the same CPU") -> PerformanceFigures:
    host = Host(cpu_model, 2, 2, 1, 1)
    return PerformanceFigures("inference", 2, tuple(latencies), "torch.cpu.synchronize", None,
                              "not reported", False, host)


def test_noise_and_other_hosts_are_never_flagged() -> None:
    steady = _figures([0.010] * 10)
    noisy_slower = _figures([0.005, 0.02] * 5)  # x1.25 median, quartiles overlapping steady's
    assert PerformanceChange(MODEL, steady, noisy_slower).flag is None
    elsewhere = _figures([0.050] * 10, cpu_model="another CPU")
    change = PerformanceChange(MODEL, steady, elsewhere)
    assert change.flag is None and change.not_comparable == "measured on different hosts"
    assert PerformanceChange(MODEL, steady, _figures([0.050] * 10)).flag == "slower"


def test_a_shell_command_as_synchronize_is_refused_naming_the_field(tmp_path: Path) -> None:
    vendor = write_vendor(tmp_path, "acme", "[float32]", "[eager]")
    with (vendor / "vendor.yaml").open("a", encoding="utf-8") as profile:
        profile.write('synchronize: "torch.cpu; rm -rf /"\n')
    with pytest.raises(InputError, match="synchronize: expected a dotted name such as "
                       "torch.cuda.synchronize"):
        load_vendor(vendor)
