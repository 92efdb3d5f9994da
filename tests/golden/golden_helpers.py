"""Builders for the golden tests: real programs, a real signed run directory holding them.

A plain module (not conftest) so test files can import it by a name no other area uses.
Programs are lowered with ExecuTorch (XNNPACK) and exported with torch.onnx, as the flows do;
the run's report is built by the kit's own builder and signed with a real key.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from kit.clock import RunDate
from kit.device import DeviceInfo
from kit.flows.interface import Lowered
from kit.formats import write_report_files
from kit.golden import GoldenWriter
from kit.golden.manifest import write_manifest
from kit.grading import build_report, collect_environment
from kit.patterns import matches
from kit.results import Status, TestRecord
from kit.rundir import WORKERS_DIR
from kit.signing.keyring import add_public_key
from kit.signing.keys import generate_private_key, private_key_pem, write_private_key
from kit.signing.sign import sign_output_dir
from kit.standard import load_standard
from kit.vendors import SkipManifest, load_vendor

#: The narrowed run the report describes (graded non-conformant: narrowed; that is expected).
SELECT = "unit/opinfo/add/float32/*"
PTE_TEST = "flows/ops/add.Tensor/float32/0"
ONNX_TEST = "models/tiny-mlp_v1.2/batch_2"
PTE_FLOW, ONNX_FLOW = "executorch_xnnpack", "onnxruntime_cpu"


class Add(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a + b


class TinyMlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(3)
        self.layer = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = self.layer(x)
        return torch.relu(hidden), hidden.argmax(dim=1)


@dataclass(frozen=True)
class Program:
    test_id: str
    flow: str
    lowered: Lowered
    inputs: tuple[torch.Tensor, ...]
    outputs: tuple[torch.Tensor, ...]


def pte_program() -> Program:
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    generator = torch.Generator().manual_seed(1)
    inputs = (torch.randn(3, 4, generator=generator), torch.randn(3, 4, generator=generator))
    exported = torch.export.export(Add(), inputs)
    lowered = to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()])
    data = lowered.to_executorch().buffer
    return Program(PTE_TEST, PTE_FLOW, Lowered(data, "pte", 1), inputs, (Add()(*inputs),))


def onnx_program() -> Program:
    inputs = (torch.randn(2, 4, generator=torch.Generator().manual_seed(2)),)
    module = TinyMlp().eval()
    exported = torch.onnx.export(module, inputs, dynamo=True, verbose=False)
    data = exported.model_proto.SerializeToString()
    with torch.no_grad():
        outputs = module(*inputs)
    return Program(ONNX_TEST, ONNX_FLOW, Lowered(data, "onnx", 2), inputs, outputs)


def _report(finished: dt.datetime) -> dict[str, object]:
    standard = load_standard()
    test_ids = [t for t in standard.test_ids("unit") if matches(t, SELECT)]
    run = {"tiers": ["unit"], "select": [SELECT], "timeout_s": 60.0, "workers": 1,
           "started_at": (finished - dt.timedelta(minutes=5)).isoformat(),
           "finished_at": finished.isoformat(), "complete": False}
    return build_report(
        records=[TestRecord(t, Status.PASS, 0.25) for t in test_ids],
        standard=standard,
        vendor=load_vendor("cpu"),
        skips=SkipManifest(entries=()),
        environment=collect_environment(DeviceInfo("cpu", 1, "x86_64")),
        run=run,
        clock=RunDate(finished.date()),
    )


@dataclass(frozen=True)
class GoldenRun:
    run_dir: Path
    keyring: Path
    key: Path

    def copy(self, destination: Path) -> GoldenRun:
        """A copy of the run directory (the keyring and key are shared: never changed)."""
        shutil.copytree(self.run_dir, destination / "run")
        return GoldenRun(destination / "run", self.keyring, self.key)


def save_programs(run_dir: Path, programs: list[Program]) -> GoldenWriter:
    writer = GoldenWriter(run_dir, run_dir / WORKERS_DIR)
    (run_dir / WORKERS_DIR).mkdir(parents=True, exist_ok=True)
    for program in programs:
        writer.save(program.test_id, program.flow, program.inputs, program.outputs,
                    program.lowered)
    return writer


def make_golden_run(root: Path, programs: list[Program]) -> GoldenRun:
    """A run directory as ``ckit run --golden`` leaves it, signed by a fresh key of cpu."""
    run_dir, keyring, key = root / "run", root / "keyring", root / "keys" / "cpu.pem"
    finished = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(minutes=5)
    run_dir.mkdir(parents=True)
    write_report_files(_report(finished), run_dir)
    writer = save_programs(run_dir, programs)
    assert writer.failures == 0
    write_manifest(run_dir, run_dir / WORKERS_DIR)
    private = generate_private_key()
    write_private_key(key, private_key_pem(private, None), force=False)
    add_public_key(keyring, "cpu", private.public_key())
    sign_output_dir(run_dir, key, None)
    return GoldenRun(run_dir, keyring, key)


KIT_ROOT = Path(__file__).resolve().parents[2]

#: ``ckit ARGS...`` run as a subprocess from the kit's checkout.
CkitRunner = Callable[..., "subprocess.CompletedProcess[str]"]


def ckit_runner(tmp_path: Path) -> CkitRunner:
    """Runs the real CLI with signing keys kept under ``tmp_path`` (the user's are untouched)."""
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "PYTHONPATH": str(KIT_ROOT)}
    env.pop("CKIT_SIGNING_KEY", None)

    def ckit(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "kit", *args], cwd=KIT_ROOT, env=env,
                              capture_output=True, text=True, timeout=900, check=False)

    return ckit
