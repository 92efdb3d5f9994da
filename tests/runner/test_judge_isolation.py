"""The judge runs none of the vendor's start-up hooks: each attack below makes the kit's unit
judgement pass everything in any process it reaches, and it does reach the worker, yet a wrong
kernel still fails.

The payload (``ckit_judge_attack``) is gated on ``CKIT_ATTACK_MARKER``: the files an attack
puts into the environment's site-packages do nothing in the suite's other processes, and they
are removed afterwards.
"""

from __future__ import annotations

import json
import os
import sysconfig
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from runner_helpers import records_by_id, run_ckit

pytest.importorskip("simnpu", reason="install the demo vendor: ckit vendors install simnpu")

WRONG = "unit/opinfo/add/float32/0"
MODULE = "ckit_judge_attack"
#: Runs in any process that imports it: notes the process, then makes every unit judgement pass.
PAYLOAD = '''
import os, sys

pytestmark = pytest.mark.slow(seconds=90)

def install():
    marker = os.environ.get("CKIT_ATTACK_MARKER")
    if not marker:
        return
    with open(marker, "a", encoding="utf-8") as notes:
        notes.write(" ".join(sys.orig_argv)[:300].replace("\\n", " ") + "\\n")
    import kit.tiers.unit.checking as checking
    checking.judge_case = lambda *args, **kwargs: []

def autoload():  # a torch.backends entry point
    install()
'''

#: An attack: given a scratch directory, arranges for the payload to run at start-up and returns
#: what the run's environment needs beside the marker.
Attack = Callable[[Path], "contextmanager[dict[str, str]]"]


@contextmanager
def sitecustomize_on_the_pythonpath(scratch: Path) -> Iterator[dict[str, str]]:
    (scratch / f"{MODULE}.py").write_text(PAYLOAD + "\ninstall()\n", encoding="utf-8")
    (scratch / "sitecustomize.py").write_text(f"import {MODULE}\n", encoding="utf-8")
    yield {"PYTHONPATH": str(scratch)}


@contextmanager
def pth_file_in_site_packages(scratch: Path) -> Iterator[dict[str, str]]:
    site = Path(sysconfig.get_paths()["purelib"])
    planted = [site / f"{MODULE}.py", site / f"{MODULE}_hook.pth"]
    planted[0].write_text(PAYLOAD, encoding="utf-8")
    planted[1].write_text(f"import {MODULE}; {MODULE}.install()\n", encoding="utf-8")
    try:
        yield {}
    finally:
        for path in planted:
            path.unlink(missing_ok=True)


@contextmanager
def torch_backends_entry_point(scratch: Path) -> Iterator[dict[str, str]]:
    site = Path(sysconfig.get_paths()["purelib"])
    module = site / f"{MODULE}.py"
    info = site / f"{MODULE}-0.0.0.dist-info"
    module.write_text(PAYLOAD, encoding="utf-8")
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {MODULE}\nVersion: 0.0.0\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text(
        f"[torch.backends]\n{MODULE} = {MODULE}:autoload\n", encoding="utf-8")
    try:
        yield {}
    finally:
        module.unlink(missing_ok=True)
        for path in info.iterdir():
            path.unlink()
        info.rmdir()


@pytest.mark.parametrize(
    "attack",
    [sitecustomize_on_the_pythonpath, pth_file_in_site_packages, torch_backends_entry_point],
)
def test_a_start_up_hook_reaches_the_worker_but_never_the_judge(
    attack: Callable[[Path], contextmanager], tmp_path: Path
) -> None:
    marker = tmp_path / "processes-reached.txt"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    out = tmp_path / "out"
    with attack(scratch) as extra:
        env = {**os.environ, **extra, "CKIT_ATTACK_MARKER": str(marker),
               "SIMNPU_FAULTS": json.dumps([{"op": "add", "kind": "wrong_large"}]),
               "XDG_CONFIG_HOME": str(tmp_path / "config")}
        done = run_ckit(["run", "--vendor", "simnpu", "--tier", "unit", "--select", WRONG,
                         "--no-sign", "--out", str(out)], env, timeout=600)
    assert (out / "report.json").exists(), done.stderr[-2000:]
    reached = marker.read_text(encoding="utf-8").splitlines() if marker.exists() else []
    assert any("kit.runner.worker" in line for line in reached), reached  # the attack is live
    assert not any("kit.runner.judge" in line for line in reached), reached
    record = records_by_id(out)[WRONG]
    assert record["status"] == "FAIL_NUMERIC", record["message"]
