"""A backward test seeds each output's gradient where that output is: ``to("cpu")`` on a device
returns a CPU tensor, whose gradient a user's loss seeds on the CPU. The kit seeded it on the
device, which autograd refuses (a false ERROR on every real device: ``expected device cpu but
got cuda:0``; on simnpu an internal assert of autograd's stream logic, which simnpu's skip
manifest had taken for a gap of its own). Run on the real simnpu device."""

from __future__ import annotations

import pytest
import simnpu  # noqa: F401  (registers the device)
import torch

from kit.standard import load_standard
from kit.tiers.unit.cases import unit_case_called_once


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_gradient_of_an_output_leaving_the_device_matches_the_cpu(dtype: str) -> None:
    case = unit_case_called_once(load_standard("v2"), f"unit/sweep/to/{dtype}/backward-0")
    on_device = case.call("simnpu", False, case.make_inputs("simnpu", False))
    assert {str(grad.device) for grad in on_device.values()} == {"simnpu:0"}
    reference = case.call("cpu", True, case.make_inputs("cpu", True))
    for name, grad in on_device.items():
        torch.testing.assert_close(grad.cpu().double(), reference[name].double())
