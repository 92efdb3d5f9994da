"""OpInfo's database as the kit's processes build it (``kit.tiers.unit.opinfo_database``):
without scipy, hypothesis and ``torch._dynamo``, each importable again afterwards, with the
entries a process holding scipy and Dynamo builds and, for the OpInfos whose PyTorch references
are scipy's, the same samples (the judge takes a worker's inputs by their locked digest)."""

from __future__ import annotations

import subprocess
import sys

#: Prints what the database holds: each entry and a digest of its first CPU float32 samples.
PROBE = """
{prelude}
import hashlib, torch
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.common_utils import TEST_SCIPY
digest = hashlib.sha256()
for op in op_db:
    digest.update(f"{{op.name}}.{{op.variant_test_name}}".encode())
    if op.name in {names!r} and torch.float32 in op.supported_dtypes("cpu"):
        torch.manual_seed(0)
        for sample in list(op.sample_inputs("cpu", torch.float32))[:2]:
            for value in (sample.input, *sample.args):
                if isinstance(value, torch.Tensor):
                    digest.update(value.numpy().tobytes())
import sys
dynamo_imported = "torch._dynamo" in sys.modules
hypothesis_imported = "hypothesis" in sys.modules
import scipy.special  # importable again: a vendor module may use it
import hypothesis.strategies  # importable again too
from torch._inductor.utils import GPU_TYPES  # the real module, importable again
from torch.testing._internal.common_device_type import GPU_TYPES as database_gpu_types
assert GPU_TYPES == database_gpu_types, (GPU_TYPES, database_gpu_types)
print(TEST_SCIPY, dynamo_imported, hypothesis_imported, len(op_db), digest.hexdigest())
"""
#: Ops whose PyTorch reference or skips are scipy's.
SCIPY_REFERENCED = ("special.i0e", "polygamma", "signal.windows.gaussian", "sinc", "i0")


def _probe(prelude: str) -> str:
    done = subprocess.run([sys.executable, "-c", PROBE.format(prelude=prelude,
                                                               names=SCIPY_REFERENCED)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_the_database_is_built_without_scipy_or_dynamo_and_holds_the_same_samples() -> None:
    kit = _probe("import kit.tiers.unit.opinfo_database")
    plain = _probe("import scipy")
    assert kit.startswith("False False False ") and plain.startswith("True True True ")
    assert kit.split()[3:] == plain.split()[3:]


def test_after_pytorchs_probe_found_scipy_the_database_is_built_with_it() -> None:
    """A process that imported PyTorch's test utilities first (plain pytest of the unit tier
    does): ``TEST_SCIPY`` is True already, and the database must find the scipy it imports."""
    probed = _probe("import torch.testing._internal.common_utils\n"
                    "import kit.tiers.unit.opinfo_database")
    assert probed.startswith("True ")
