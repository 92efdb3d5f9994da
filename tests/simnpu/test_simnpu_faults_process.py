"""Faults that end or wreck a process, and SIMNPU_FAULTS itself, each in a fresh interpreter.

The children start together (importing torch dominates their run time) and each test checks one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass

import pytest
from process_helpers import communicate_all

#: Generous: the children spend most of it importing torch on a busy 2-core machine.
CHILD_TIMEOUT = 180

ADD_ON_DEVICE = """
import json, torch, simnpu
a = torch.ones(4, device="simnpu")
print(json.dumps((a + a).cpu().tolist()))
"""

POISON_THEN_COMPUTE = """
import json, torch, simnpu
a = torch.ones(4, device="simnpu")
try:
    a * 2
except RuntimeError as exc:
    print(exc)
print(simnpu.faults.is_poisoned())
later = {
    "add": (a + a).cpu().tolist(),
    "ones": torch.ones(2, device="simnpu").cpu().tolist(),
    "upload": torch.zeros(2).to("simnpu").cpu().tolist(),
    "item": torch.ones((), device="simnpu").item(),
}
print(json.dumps(later))
"""

IMPORT_DIRECTLY_THEN_VIA_KIT = """
from kit.device import enable_device
from kit.errors import DeviceError
from kit.vendors import load_vendor
try:
    import simnpu
except Exception as exc:
    print(type(exc).__name__, exc, sep=": ")
try:
    enable_device(load_vendor("simnpu"))
except DeviceError as exc:
    print(exc)
"""


@dataclass(frozen=True)
class Child:
    code: str
    faults: str | None


def _rules(*rules: dict[str, object]) -> str:
    return json.dumps(list(rules))


CHILDREN = {
    "no_variable": Child(
        ADD_ON_DEVICE + "print(len(simnpu.faults.active_rules()), torch.simnpu.get_device_name(0))",
        None,
    ),
    "rules_file": Child(ADD_ON_DEVICE + "print(torch.simnpu.get_device_name(0))", "@RULES_FILE"),
    "malformed": Child(IMPORT_DIRECTLY_THEN_VIA_KIT, "[{op: add, kind: explode}]"),
    "abort": Child(ADD_ON_DEVICE, _rules({"op": "aten::add.Tensor", "kind": "abort"})),
    "segfault": Child(ADD_ON_DEVICE, _rules({"op": "aten::add.Tensor", "kind": "segfault"})),
    "poison": Child(POISON_THEN_COMPUTE, _rules({"op": "mul", "kind": "poison"})),
}


def _env(faults: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SIMNPU_FAULTS"}
    if faults is not None:
        env["SIMNPU_FAULTS"] = faults
    return env


def _start(code: str, faults: str | None, **options: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code],
        env=_env(faults),
        text=True,
        **options,  # type: ignore[call-overload]
    )


@pytest.fixture(scope="module")
def finished(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, subprocess.CompletedProcess[str]]:
    rules_file = tmp_path_factory.mktemp("simnpu") / "faults.yaml"
    rules_file.write_text("- {op: add, kind: wrong_large}\n", encoding="utf-8")
    running = {}
    for name, child in CHILDREN.items():
        faults = child.faults.replace("RULES_FILE", str(rules_file)) if child.faults else None
        running[name] = _start(child.code, faults, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return communicate_all(running, CHILD_TIMEOUT)


def test_faults_are_off_without_the_variable(finished) -> None:
    child = finished["no_variable"]
    assert child.returncode == 0, child.stderr
    values, status = child.stdout.splitlines()
    assert json.loads(values) == [2.0, 2.0, 2.0, 2.0]
    assert status == "0 SimNPU-1 (pure Python)"


def test_rules_load_from_the_variable_via_a_file(finished) -> None:
    child = finished["rules_file"]
    assert child.returncode == 0, child.stderr
    values, name = child.stdout.splitlines()
    assert all(value > 20 for value in json.loads(values))
    assert name == "SimNPU-1 (pure Python) [fault injection: 1 rule]"


def test_malformed_variable_fails_the_import_with_one_line(finished) -> None:
    child = finished["malformed"]
    assert child.returncode == 0, child.stderr
    raw, via_kit = child.stdout.splitlines()
    assert raw.startswith("FaultConfigError: SIMNPU_FAULTS: rule 0: field kind: expected one of")
    assert raw.endswith("got 'explode'")
    # The kit's own import step turns it into its one-line device error.
    assert "cannot import 'simnpu' (FaultConfigError: SIMNPU_FAULTS: rule 0: field kind" in via_kit


@pytest.mark.parametrize(
    ("kind", "expected_signal"),
    [("abort", signal.SIGABRT), ("segfault", signal.SIGSEGV)],
)
def test_crash_kinds_kill_the_process_with_a_signal(
    finished, kind: str, expected_signal: int
) -> None:
    child = finished[kind]
    assert child.returncode == -expected_signal
    assert child.stdout == ""
    assert f"simnpu: injected fault {kind} in aten::add.Tensor" in child.stderr


def test_poison_raises_then_every_later_result_is_garbage(finished) -> None:
    child = finished["poison"]
    assert child.returncode == 0, child.stderr
    message, poisoned, later = child.stdout.splitlines()
    assert message.startswith("simnpu: device fatal error in aten::mul.Tensor")
    assert poisoned == "True"
    results = json.loads(later)
    assert results["add"] != [2.0, 2.0, 2.0, 2.0]
    assert results["ones"] != [1.0, 1.0]
    assert results["upload"] != [0.0, 0.0]
    assert results["item"] != 1.0


def test_hang_blocks_until_killed() -> None:
    code = (
        "import sys, torch, simnpu\n"
        "a = torch.ones(4, device='simnpu')\n"
        "print('ready', flush=True)\n"
        "a + a\n"
        "print('returned', flush=True)\n"
    )
    child = _start(
        code,
        _rules({"op": "add", "kind": "hang"}),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"  # torch imported; the op comes next
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(timeout=3)
    finally:
        child.kill()
        remaining, _ = child.communicate(timeout=CHILD_TIMEOUT)
    assert "returned" not in remaining
