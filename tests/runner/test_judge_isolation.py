"""Attacks on the judge through the vendor's Python installation (``kit.runner.isolation``).

Each test plants one start-up hook in the site-packages of a real throwaway venv that sees the
kit's packages, and runs the kit from that venv's python against simnpu with a wrong ``add``
kernel. The hook's payload makes ``torch.add`` on CPU return what the device's fault returns
(simnpu's ``wrong_large``), so that a judge it reached would compute the wrong result as its
reference and pass it; it stays out of the vendor's worker, where the device computes with CPU
kernels. The wrong kernel must still fail. Each test also shows that its hook is live: the
payload notes every process it patches, and the run's orchestrator (the venv's ordinary
interpreter) is one of them; ``test_the_payload_passes_the_wrong_kernel_where_it_runs`` shows
that a judge it reaches passes the wrong result.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from runner_helpers import ADD_FAULT as FAULT
from runner_helpers import (
    JUDGE_HERE,
    PAYLOAD,
    PAYLOAD_MODULE,
    evidence_of,
    link_site_packages,
    records_by_id,
)
from runner_helpers import WRONG_ADD as WRONG

pytest.importorskip("simnpu", reason="install the demo vendor: ckit vendors install simnpu")

pytestmark = [pytest.mark.slow(seconds=60), pytest.mark.heavy]  # an attack venv per run

RUN_PAYLOAD = f"import {PAYLOAD_MODULE}; {PAYLOAD_MODULE}.install()\n"


@dataclass(frozen=True)
class AttackVenv:
    """A throwaway venv whose site-packages holds the payload and sees the kit's packages."""

    python: Path
    site_packages: Path


@pytest.fixture(scope="module")
def attack_venv(tmp_path_factory: pytest.TempPathFactory) -> AttackVenv:
    root = tmp_path_factory.mktemp("attack-venv")
    # From a venv, ``venv`` builds on the base interpreter: the new one shares nothing but it.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    paths = sysconfig.get_paths(vars={"base": str(root), "platbase": str(root)})
    site_packages = Path(paths["purelib"])
    # The kit's packages in the venv's own site-packages (its .pth files included): the judge
    # imports from site-packages alone, never from a directory a .pth file adds.
    link_site_packages(site_packages)
    (site_packages / f"{PAYLOAD_MODULE}.py").write_text(PAYLOAD, encoding="utf-8")
    return AttackVenv(Path(paths["scripts"]) / "python", site_packages)


@pytest.fixture
def plant(attack_venv: AttackVenv) -> Iterator[Callable[[str, str], None]]:
    """Writes a file under the venv's site-packages for one test, and removes it after."""
    planted: list[Path] = []

    def write(relative: str, text: str) -> None:
        path = attack_venv.site_packages / relative
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        planted.append(path)

    yield write
    for path in reversed(planted):
        path.unlink()
        if path.parent != attack_venv.site_packages and not any(path.parent.iterdir()):
            path.parent.rmdir()


def plant_distribution(plant: Callable[[str, str], None], name: str, entry_points: str) -> None:
    """A dist-info directory (``importlib.metadata`` finds it) with these entry points."""
    info = f"{name}-0.0.0.dist-info"
    plant(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.0.0\n")
    plant(f"{info}/entry_points.txt", entry_points)


@dataclass(frozen=True)
class AttackRun:
    """A run from the attack venv: its output directory and the processes the payload patched."""

    out: Path
    patched: list[str]


def run_with_wrong_add(
    venv: AttackVenv, scratch: Path, tiers: str = "unit", extra_env: dict[str, str] | None = None
) -> AttackRun:
    """``ckit run`` of the wrong ``add`` from the venv's python, outside the kit's checkout;
    the wrong kernel fails, whatever the hook did elsewhere."""
    marker, out = scratch / "patched-processes.txt", scratch / "out"
    env = {**os.environ, "SIMNPU_FAULTS": json.dumps(FAULT), "CKIT_ATTACK_MARKER": str(marker),
           "CKIT_KEEP_EVIDENCE": "1",  # the test's evidence is judged again by hand
           **(extra_env or {})}
    env.pop("TORCH_DEVICE_BACKEND_AUTOLOAD", None)  # the autoload on, as PyTorch ships it
    done = subprocess.run(
        [str(venv.python), "-m", "kit", "run", "--vendor", "simnpu", "--tier", tiers,
         "--select", WRONG, "--no-sign", "--out", str(out)],
        env=env, cwd=scratch, capture_output=True, text=True, timeout=600, check=False)
    assert (out / "report.json").exists(), done.stderr[-2000:]
    patched = marker.read_text(encoding="utf-8").splitlines() if marker.exists() else []
    # The attack is live: the venv's ordinary interpreter (the orchestrator) runs the hook.
    assert any(" kit run " in line for line in patched), (patched, done.stderr[-2000:])
    record = records_by_id(out)[WRONG]
    assert record["status"] == "FAIL_NUMERIC", (record["status"], record["message"])
    assert not any("kit.runner.judge" in line for line in patched), patched
    return AttackRun(out, patched)


def test_attack_torch_backends_entry_point(
    attack_venv: AttackVenv, plant: Callable[[str, str], None], tmp_path: Path
) -> None:
    plant_distribution(plant, "ckit_attack_backend",
                       f"[torch.backends]\nckit_attack = {PAYLOAD_MODULE}:install\n")
    run_with_wrong_add(attack_venv, tmp_path)


def test_attack_pth_file(
    attack_venv: AttackVenv, plant: Callable[[str, str], None], tmp_path: Path
) -> None:
    plant("ckit_attack.pth", RUN_PAYLOAD)
    run = run_with_wrong_add(attack_venv, tmp_path)
    # Not vacuous: the judge's own code, in the venv's ordinary interpreter, passes the
    # device's wrong result the run failed.
    judged = subprocess.run(
        [str(attack_venv.python), "-c", JUDGE_HERE, WRONG, str(evidence_of(run.out))],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    assert judged.stdout.split() == ["PASS"], judged.stderr[-2000:]


def test_attack_sitecustomize(
    attack_venv: AttackVenv, plant: Callable[[str, str], None], tmp_path: Path
) -> None:
    plant("sitecustomize.py", RUN_PAYLOAD)
    run_with_wrong_add(attack_venv, tmp_path)


def test_attack_pythonpath(attack_venv: AttackVenv, tmp_path: Path) -> None:
    hooks = tmp_path / "on-the-pythonpath"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(RUN_PAYLOAD, encoding="utf-8")
    run_with_wrong_add(attack_venv, tmp_path, extra_env={"PYTHONPATH": str(hooks)})


def test_attack_ckit_flows_entry_point(
    attack_venv: AttackVenv, plant: Callable[[str, str], None], tmp_path: Path
) -> None:
    # The kit's own plug-in group: a flows run lists every flow, in the judge too (warm-up).
    plant("ckit_attack_flow.py", RUN_PAYLOAD + ATTACK_FLOW)
    plant_distribution(plant, "ckit_attack_flow",
                       "[ckit.flows]\nckit_attack = ckit_attack_flow:AttackFlow\n")
    run_with_wrong_add(attack_venv, tmp_path, tiers="unit,flows")


#: A vendor flow: the registry imports its module wherever flows are listed.
ATTACK_FLOW = """
from kit.flows.eager import EagerFlow

class AttackFlow(EagerFlow):
    name = "ckit_attack"
"""
