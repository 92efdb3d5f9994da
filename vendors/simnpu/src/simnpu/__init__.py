"""simnpu: a simulated NPU for PyTorch, registered out of tree through PrivateUse1.

``import simnpu`` makes device ``simnpu`` usable: ``torch.ones(2, device="simnpu")``,
``model.to("simnpu")``, ``torch.simnpu.is_available()``. Ops run through PyTorch's real
dispatcher and compute on the host, except a few kernels with simnpu's own numerics
(``simnpu.kernels``); some things are honestly unsupported (``simnpu.gaps``). Set
``SIMNPU_FAULTS`` to make it misbehave on purpose (``simnpu.faults``).
"""

from __future__ import annotations

from simnpu import faults, forks

# Parse the fault rules first: a malformed SIMNPU_FAULTS fails the import before torch changes.
faults.load_from_environment()

from simnpu.registration import register  # noqa: E402
from simnpu.runtime import device_count, get_device_name, is_available  # noqa: E402
from simnpu.tensor import DEVICE_TYPE, SimTensor  # noqa: E402

register()
forks.install()

__version__ = "0.1.0"

__all__ = [
    "DEVICE_TYPE",
    "SimTensor",
    "device_count",
    "faults",
    "get_device_name",
    "is_available",
]
