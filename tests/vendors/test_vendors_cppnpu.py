"""cppnpu, the C++ reference vendor: built from a fresh copy of vendors/cppnpu by a real ``ckit
vendors install`` (g++ through torch.utils.cpp_extension) into a fresh venv, then used on its
device and certified by narrow real ``ckit run``s, with and without CPPNPU_FAULTS.

The build dominates (about 25 s of CPU, 1.5 min on a busy 2-core machine); the children after
it start together and each test checks one.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from process_helpers import communicate_all
from vendors_helpers import linked_venv, offline_pip_env

from kit import paths
from kit.errors import ExitCode

pytestmark = [pytest.mark.slow(seconds=270), pytest.mark.heavy]  # compiles into a fresh venv

if shutil.which("g++") is None:
    pytest.skip("cppnpu is C++: g++ is needed to build it", allow_module_level=True)

CHILD_TIMEOUT = 600

#: Each check prints one JSON line: name -> value (each test reads its own).
ON_DEVICE = """
import json, torch, cppnpu

def same(device_result, cpu_result):
    return device_result.device.type == "cppnpu" and torch.equal(device_result.cpu(), cpu_result)

checks = {}
cpu = torch.arange(12, dtype=torch.float32).reshape(3, 4)
before = cppnpu.memory_allocated()
dev = cpu.to("cppnpu")
checks["device"] = str(dev.device)
checks["round_trip"] = torch.equal(dev.cpu(), cpu)
checks["own_memory"] = [
    torch.ops.cppnpu.is_device_memory(dev), torch.ops.cppnpu.is_device_memory(cpu)
]
checks["distinct_pointer"] = dev.data_ptr() != cpu.data_ptr()
checks["arena_bytes"] = cppnpu.memory_allocated() - before
view = dev.t()  # a view shares the device storage: writing it writes the base
view[1, 0] = 100.0
checks["view_writes_base"] = dev[0, 1].item()
cpu[0, 1] = 100.0  # the host copy follows, for the checks below

ints = torch.tensor([[1, 2**31 - 1]], dtype=torch.int32)
pairs = [
    (cpu, cpu.flip(0)),                                   # float32, non-contiguous
    (cpu.half(), torch.tensor([[1], [2], [3]]).long()),   # float16 + int64, broadcast
    (ints, ints.t()),                                     # int32, overflow wraps
    (cpu > 5, cpu < 8),                                   # bool
    (cpu, torch.tensor(2.5)),                             # a host 0-dim scalar
]
checks["native"] = {
    name: [same(op(a.to("cppnpu") if a.dim() else a, b.to("cppnpu") if b.dim() else b),
                op(a, b)) for a, b in pairs]
    for name, op in {"add": lambda a, b: torch.add(a, b, alpha=2), "mul": torch.mul}.items()
}
signed = torch.tensor([-2.0, -0.0, 0.0, 3.5, float("inf"), float("-inf")])
checks["native"]["relu"] = [same(torch.relu(signed.to("cppnpu")), torch.relu(signed))]
checks["relu_nan"] = torch.relu(torch.tensor([float("nan")], device="cppnpu")).isnan().item()
mask = cpu.t() > 4                                        # non-contiguous, broadcast to (2, 4, 3)
wheres = [(mask, cpu.t().half(), ints.long().reshape(2, 1, 1)), (mask, cpu.t(), 2.5)]
checks["native"]["where"] = [
    same(torch.where(*(a.to("cppnpu") if torch.is_tensor(a) else a for a in args)),
         torch.where(*args))
    for args in wheres
]
rows = torch.tensor([2, 0, 2, 1])
selects = [(cpu.t(), 1, rows), (cpu, -1, rows.int()[::2]), (torch.tensor(7.0), 0, rows[1:2])]
checks["native"]["index_select"] = [
    same(torch.index_select(a.to("cppnpu"), dim, i.to("cppnpu")), torch.index_select(a, dim, i))
    for a, dim, i in selects
]
checks["fallback"] = [
    same(dev.sin(), cpu.sin()), same(dev @ dev.t(), cpu @ cpu.t()), same(dev.sum(1), cpu.sum(1))
]
# Lazily conjugated and negated views copied off and on the device keep their values (a conj
# view's copy recursed until the stack overflowed; hfft's c2r transform copies one).
z = torch.complex(cpu, -cpu)
lazy = {"conj": lambda t: t.conj(), "neg": torch._neg_view}
checks["lazy_bits"] = {
    name: [torch.equal(view(z.to("cppnpu")).cpu(), view(z).resolve_conj().resolve_neg()),
           torch.equal(view(z.to("cppnpu")).clone().cpu(), view(z).resolve_conj().resolve_neg())]
    for name, view in lazy.items()
}
checks["hfft2"] = torch.allclose(
    torch.fft.hfft2(cpu.to("cppnpu"), s=[3, 10]).cpu(), torch.fft.hfft2(cpu, s=[3, 10]))
# A copy off the device with non_blocking=True lands in the backend's pinned host memory.
off = dev.to("cpu", torch.float64, non_blocking=True, copy=True)
checks["pinned"] = [torch.equal(off, cpu.double()), off.is_pinned(), cpu.is_pinned()]
cppnpu.faults.set_faulty_ops(("mul",))
checks["mul_faulty"] = [
    same(dev * 2, cpu * 2), same(dev + 2, cpu + 2), torch.cppnpu.get_device_name()
]
print(json.dumps(checks))
"""

#: One test of each of the ops standard v2 requires to run natively (attribution).
WHERE_ID = "unit/opinfo/where/float32/1"  # broadcasts all three operands
INDEX_SELECT_ID = "unit/opinfo/index_select/float32/noncontiguous"
#: where compiled with cppnpu's dynamo backend: its graph runs the native kernel (faulty or not).
COMPILED_WHERE = "compile/opinfo/where/float32/0"
#: A narrow run of the native ops and one fallback op (sub); add's promotions pass a Python
#: number for its Tensor ``other`` (the dispatch mode sees the wrapped number as a scalar).
CLEAN_SELECT = ["unit/opinfo/add/float32/?", "unit/opinfo/mul/float32/?",
                "unit/opinfo/nn.functional.relu/float32/?", "unit/opinfo/sub/float32/?",
                "unit/opinfo/add/int32/promotion-*", WHERE_ID, INDEX_SELECT_ID, COMPILED_WHERE]
#: Composites that call the faulty kernels: they must fail too and blame add's and where's tests.
BLAMING_IDS = ["unit/opspec/add_broadcast_both/float32/small",
               "unit/opspec/where_broadcast/float32/small"]
FAULTY_SELECT = ["unit/opinfo/add/float32/?", "unit/opinfo/mul/float32/?", WHERE_ID, *BLAMING_IDS,
                 COMPILED_WHERE]


def _run_args(out: Path, select: list[str]) -> list[str]:
    selection = [arg for pattern in select for arg in ("--select", pattern)]
    return ["-m", "kit", "run", "--vendor", "cppnpu", "--tier", "unit,compile", *selection,
            "--no-sign",
            "--out", str(out)]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], str]:
    """A fresh venv with cppnpu built into it from a copy of vendors/cppnpu holding no build
    output; its python, the environment naming the copy, and the install's stdout."""
    root = tmp_path_factory.mktemp("cppnpu")
    vendors = root / "vendors"
    outputs = shutil.ignore_patterns("build", "*.so", "*.egg-info", "__pycache__")
    shutil.copytree(paths.vendors_dir() / "cppnpu", vendors / "cppnpu", ignore=outputs)
    python = linked_venv(root / "venv")  # its runs start judges: torch in its site-packages
    env = offline_pip_env(CKIT_VENDORS_DIR=str(vendors))
    env.pop("CPPNPU_FAULTS", None)
    done = subprocess.run(
        [str(python), "-m", "kit", "vendors", "install", "cppnpu"],
        capture_output=True, text=True, env=env, check=False, timeout=CHILD_TIMEOUT,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return python, env, done.stdout


@pytest.fixture(scope="module")
def finished(
    built: tuple[Path, dict[str, str], str], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, subprocess.CompletedProcess[str]]:
    python, env, _ = built
    runs = tmp_path_factory.mktemp("runs")
    children = {
        "device": (["-c", ON_DEVICE], env),
        "clean": (_run_args(runs / "clean", CLEAN_SELECT), env),
        "faulty": (_run_args(runs / "faulty", FAULTY_SELECT), env | {"CPPNPU_FAULTS": "add,where"}),
        "malformed": (["-m", "kit", "vendors", "validate", "cppnpu"],
                      env | {"CPPNPU_FAULTS": "add,sub"}),
    }
    running = {
        name: subprocess.Popen([str(python), *args], env=child_env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for name, (args, child_env) in children.items()
    }
    results = communicate_all(running, CHILD_TIMEOUT)
    results["runs"] = subprocess.CompletedProcess([], 0, str(runs), "")
    return results


def _records(finished: dict[str, subprocess.CompletedProcess[str]], run: str) -> dict[str, Any]:
    report = Path(finished["runs"].stdout) / run / "report.json"
    return {record["id"]: record for record in json.loads(report.read_text())["records"]}


def _device_checks(finished: dict[str, subprocess.CompletedProcess[str]]) -> dict[str, Any]:
    done = finished["device"]
    assert done.returncode == 0, done.stderr[-3000:]
    checks: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return checks


def test_builds_from_a_fresh_copy_into_the_venv(built: tuple[Path, dict[str, str], str]) -> None:
    python, _, stdout = built
    last = stdout.splitlines()[-1]
    assert last.startswith("OK cppnpu: installed 0 requirement(s); built (output: ")
    assert last.endswith("; imported cppnpu")
    log = Path(last.split("built (output: ", 1)[1].split(")", 1)[0])
    assert "Successfully installed kit-cppnpu-0.1.0" in log.read_text()
    log.unlink()
    located = subprocess.run(
        [str(python), "-c", "import cppnpu.registration as r; print(r.library_path())"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    assert located.startswith(str(python.parent.parent))  # the venv's own build


def test_device_tensors_live_in_the_device_arena(
    finished: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    checks = _device_checks(finished)
    assert checks["device"] == "cppnpu:0"
    assert checks["round_trip"] and checks["distinct_pointer"]
    assert checks["own_memory"] == [True, False]
    assert checks["arena_bytes"] == 12 * 4
    assert checks["view_writes_base"] == 100.0


def test_native_and_fallback_ops_match_the_cpu(
    finished: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    checks = _device_checks(finished)
    assert checks["native"] == {
        "add": [True] * 5, "mul": [True] * 5, "relu": [True], "where": [True] * 2,
        "index_select": [True] * 3,
    }
    assert checks["relu_nan"] is True
    assert checks["fallback"] == [True, True, True]
    assert checks["lazy_bits"] == {"conj": [True, True], "neg": [True, True]}
    assert checks["hfft2"] is True
    assert checks["pinned"] == [True, True, False]


def test_a_faulty_native_kernel_is_wrong_and_says_so(
    finished: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    assert _device_checks(finished)["mul_faulty"] == [
        False, True, "CppNPU-1 (C++ reference backend) [faults: mul]"
    ]


def test_narrow_certification_run_passes(
    finished: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    done = finished["clean"]
    # Narrowed: non-conformant, but nothing failed: partial's own exit code.
    assert done.returncode == ExitCode.PARTIAL, done.stderr[-3000:]
    records = _records(finished, "clean")
    assert {test_id.split("/")[2] for test_id in records} == {
        "add", "mul", "nn.functional.relu", "sub", "where", "index_select"
    }
    assert {record["status"] for record in records.values()} == {"PASS"}
    # v2 requires these two natively: a pass through the fallback would be FAIL_SEMANTIC.
    assert records[WHERE_ID]["details"]["dispatch"] == {"native": ["aten::where.self"]}
    assert records[INDEX_SELECT_ID]["details"]["dispatch"] == {"native": ["aten::index_select"]}


def test_fault_switch_fails_the_faulty_op_and_its_siblings_pass(
    finished: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    done = finished["faulty"]
    assert done.returncode == 1, done.stderr[-3000:]
    records = _records(finished, "faulty")
    statuses = {
        op: {r["status"] for i, r in records.items()
             if i.split("/")[2] == op and r["details"].get("numel") != 0}
        for op in ("add", "mul", "where")
    }
    assert statuses == {"add": {"FAIL_NUMERIC"}, "mul": {"PASS"}, "where": {"FAIL_NUMERIC"}}


def test_a_composite_through_a_faulty_kernel_fails_and_blames_its_op(
    finished: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    records = _records(finished, "faulty")
    for composite, op in zip(BLAMING_IDS, ("add", "where"), strict=True):
        record = records[composite]
        assert record["status"] == "FAIL_NUMERIC", record
        suspects = record["details"]["suspects"]
        assert suspects and {suspect.split("/")[2] for suspect in suspects} == {op}, suspects
        assert all(records[suspect]["status"] == "FAIL_NUMERIC" for suspect in suspects)


def test_compiled_graph_is_whole_and_runs_the_device_kernel(
    finished: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    # a C++ tensor dynamo traces: one graph, no break, one more for the second input shape
    whole = [{"backend": "cppnpu", "graphs": 1, "graph_breaks": 0, "recompiles": 1,
              "stage": None}]
    clean, faulty = (_records(finished, run)[COMPILED_WHERE] for run in ("clean", "faulty"))
    assert (clean["status"], clean["details"]["compile"]) == ("PASS", whole)
    # the compiled graph's where is the device's native kernel: CPPNPU_FAULTS reaches it
    assert (faulty["status"], faulty["details"]["compile"]) == ("FAIL_NUMERIC", whole)


def test_malformed_fault_switch_fails_the_import_in_one_line(
    finished: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    done = finished["malformed"]
    assert done.returncode == 3
    assert done.stderr.strip().splitlines()[-1].endswith(
        "CPPNPU_FAULTS: sub is not a native cppnpu op (expected a comma-separated list of: "
        "add, mul, relu, where, index_select)"
    ), done.stderr
