"""Helpers for the runner tests (a unique module name: several test dirs have a conftest)."""

from __future__ import annotations

import json
import site
import subprocess
import sys
from pathlib import Path
from typing import Any

from planting_helpers import PlantedRun

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


#: The fault scenarios modules check on one faulty simnpu run (the ``simnpu_faults_out``
#: fixture), registered at import (``plant_simnpu_faults``).
FAULTY_RUN = PlantedRun()
#: The faulty run's per-test limit: ample for one small op on a loaded machine, short for a hang.
HANG_TIMEOUT_S = 10

#: The test simnpu's faulty ``add`` fails, which a judge-patching module would pass.
WRONG_ADD = "unit/opinfo/add/float32/0"
#: The name the judge-isolation attacks plant ``PAYLOAD`` under.
PAYLOAD_MODULE = "ckit_attack_payload"
#: simnpu's fault for ``add``: every result far off (``simnpu.faults``, ``wrong_large``).
ADD_FAULT = [{"op": "add", "kind": "wrong_large"}]
#: The attack itself: ``aten::add.Tensor`` on CPU perturbed as ``wrong_large`` perturbs the
#: device's result (relative error 10, away from zero, at least 10 * 0.1 near zero), computed
#: with ``sub`` so the kernel never calls itself.
PAYLOAD = '''
import os, sys

def install():
    if "kit.runner.worker" in " ".join(sys.orig_argv):
        return  # the device computes with CPU kernels: the vendor leaves its own process alone
    import torch
    global LIBRARY
    LIBRARY = torch.library.Library("aten", "IMPL")
    LIBRARY.impl("add.Tensor", wrong_add, "CPU")
    marker = os.environ.get("CKIT_ATTACK_MARKER")
    if marker:
        with open(marker, "a", encoding="utf-8") as notes:
            notes.write(" ".join(sys.orig_argv)[:300].replace("\\n", " ") + "\\n")

def wrong_add(a, b, *, alpha=1):
    import torch
    right = torch.ops.aten.sub.Tensor(a, b, alpha=-alpha)
    if not right.is_floating_point():
        return right
    away = torch.where(right < 0, -1.0, 1.0).to(right.dtype)
    return torch.ops.aten.sub.Tensor(right, away * right.abs().clamp_min(0.1), alpha=-10)
'''

#: What the judge does with one test's evidence, in whatever interpreter runs it.
JUDGE_HERE = """
import sys
from pathlib import Path
from kit.runner.judge import judge_context, judge_record
print(judge_record(judge_context(None), sys.argv[1], Path(sys.argv[2]), 0.0).status.value)
"""


def evidence_of(out: Path) -> Path:
    """The evidence the run's only worker left for its last test (a one-test run: the test),
    kept by a run under ``CKIT_KEEP_EVIDENCE=1`` (``kit.runner.lifecycle.KEEP_EVIDENCE_ENV``)."""
    (evidence,) = (out / "workers").glob("evidence-*.bin")
    return evidence


def plant_simnpu_faults(rules: list[dict[str, Any]], selects: list[str]) -> None:
    FAULTY_RUN.plant(rules, selects)


def link_site_packages(site_packages: Path) -> None:
    """Links every entry of this environment's site-packages into another's ``site_packages``
    (a venv's own): torch and the kit's other dependencies installed there, as the judge's path
    requires, without copying them."""
    for own in site.getsitepackages():
        for entry in Path(own).iterdir():
            link = site_packages / entry.name
            if not link.exists():
                link.symlink_to(entry)


def run_ckit(
    args: list[str], env: dict[str, str], **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kit", *args], env=env, capture_output=True, text=True, **kwargs
    )


def records_by_id(out_dir: Path) -> dict[str, dict[str, Any]]:
    report = json.loads((out_dir / "report.json").read_text())
    return {record["id"]: record for record in report["records"]}
