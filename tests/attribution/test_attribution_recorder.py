"""Where a device call's ops ran, asked of the real dispatcher on the real PrivateUse1 device
(simnpu): natively, decomposed or on CPU in this process; through the fallback in a child whose
simnpu was imported with a ``fallback`` fault. The recording changes no result."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from kit.attribution.dispatch import Dispatch, Where
from kit.attribution.recorder import DispatchLog, decomposed_of, device_kernel_place, recording
from kit.standard import load_standard
from kit.tiers.unit.config import load_unit_config

pytestmark = pytest.mark.skipif(importlib.util.find_spec("simnpu") is None,
                                reason="simnpu not installed")

#: A child's matmul, flip and CPU add under the recorder, printed as details.dispatch.
RECORD_IN_CHILD = """
import json, torch, simnpu
from kit.attribution.recorder import DispatchLog, decomposed_of, recording
x = torch.arange(12.0, device="simnpu").reshape(3, 4)
log = DispatchLog("simnpu")
with recording(log):
    torch.matmul(x, x.t()); torch.flip(x, (0,)); torch.ones(2) + 1
print(json.dumps(log.dispatch(decomposed_of(["matmul"], log.seen)).to_json()))
"""


def _record(call):  # type: ignore[no-untyped-def]
    log = DispatchLog("simnpu")
    with recording(log):
        result = call()
    return result, log


def test_each_op_is_placed_where_the_dispatcher_sends_it() -> None:
    import simnpu  # noqa: F401 - registers the device

    x = torch.arange(12.0, device="simnpu").reshape(3, 4)
    _, log = _record(lambda: (torch.matmul(x, x.t()), x.t(), torch.ones(2) + 1))
    dispatch = log.dispatch(decomposed_of(["matmul"], log.seen))
    assert "aten::mm" in dispatch.native  # simnpu's own kernel
    assert "aten::matmul" in dispatch.decomposed  # CompositeImplicitAutograd: never reached it
    assert "aten::t" in dispatch.decomposed  # CompositeExplicitAutograd: split below the mode
    assert "aten::add.Tensor" in dispatch.cpu and not dispatch.fallback
    assert Dispatch.from_json(json.loads(json.dumps(dispatch.to_json()))) == dispatch
    # sub's packet also lists TorchScript-only overloads (sub.int) the dispatcher does not know.
    assert decomposed_of(["sub"], {}) == ()


def test_recording_changes_no_result() -> None:
    import simnpu  # noqa: F401

    torch.manual_seed(0)
    a, b = torch.randn(5, 7), torch.randn(7, 3)

    def call() -> torch.Tensor:
        left, right = a.to("simnpu"), b.to("simnpu")
        return (torch.softmax(left @ right, 1) + left.sum()).cpu()

    recorded, _ = _record(call)
    assert torch.equal(recorded, call())


def test_an_op_without_a_device_kernel_is_placed_in_the_fallback(tmp_path: Path) -> None:
    env = {**os.environ, "SIMNPU_FAULTS": json.dumps([{"op": "flip", "kind": "fallback"}])}
    done = subprocess.run([sys.executable, "-c", RECORD_IN_CHILD], env=env, capture_output=True,
                          text=True, timeout=180, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    dispatch = json.loads(done.stdout.strip().splitlines()[-1])
    assert dispatch["fallback"] == ["aten::flip"]
    assert "aten::mm" in dispatch["native"] and "aten::matmul" in dispatch["decomposed"]


def test_simnpu_has_a_kernel_of_its_own_for_every_op_v2_requires_natively() -> None:
    import simnpu  # noqa: F401

    attribution = load_unit_config(load_standard()).attribution
    assert attribution is not None and attribution.native_required
    for op in attribution.native_required:
        assert device_kernel_place(op, "PrivateUse1") is Where.NATIVE, op
