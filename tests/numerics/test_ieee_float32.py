"""The kit runs float32 at float32 precision: the standards' error model judges float32 results,
and PyTorch's CUDA convolutions default to TF32 (on an H200 a ResNet-18 training step's first
convolution gradient came out 180x over the bound until the kit switched TF32 off)."""

from __future__ import annotations

import subprocess
import sys

# In a fresh interpreter: the switches are process-wide, and torch's test utilities (which the
# unit tier imports before the device is enabled) freeze the cuDNN flags against assignment.
_PROGRAM = """
import torch
import torch.testing._internal.common_utils  # freezes torch.backends' flags
from kit.device import use_ieee_float32
assert torch.backends.flags_frozen()
use_ieee_float32()
print(torch.backends.cudnn.allow_tf32, torch.get_float32_matmul_precision(),
      torch.backends.cuda.matmul.allow_tf32)
"""


def test_tf32_is_off_even_after_torchs_test_utilities_froze_the_flags() -> None:
    done = subprocess.run([sys.executable, "-c", _PROGRAM], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "highest", "False"]


def test_a_replaced_torch_without_the_switches_still_reaches_the_deploy_checks() -> None:
    """A vendor recipe that replaced torch (the container fixture's stand-in of the wrong
    release has no switches at all) must get to the deploy tier's pinned-torch check, which
    names it: switching TF32 off is skipped where the switch is absent."""
    from pathlib import Path

    fake = (Path(__file__).resolve().parents[1]
            / "container/vendors/recipe-replaces-torch/fake-torch")
    kit_root = Path(__file__).resolve().parents[2]
    program = ("import torch; from kit.device import use_ieee_float32; use_ieee_float32(); "
               "print(torch.__version__)")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120, check=False,
                          env={"PYTHONPATH": f"{fake}:{kit_root}", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "2.12.0"
