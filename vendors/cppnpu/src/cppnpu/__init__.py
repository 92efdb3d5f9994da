"""cppnpu: a PrivateUse1 backend for PyTorch written in C++, the kit's reference C++ vendor.

``import cppnpu`` loads the compiled library (``_C``: kernels, allocator, device guard, CPU
fallback; see ``csrc/cppnpu.cpp``), names PrivateUse1 ``cppnpu`` and installs ``torch.cppnpu``:
``torch.ones(2, device="cppnpu")``, ``model.to("cppnpu")``. Set ``CPPNPU_FAULTS`` to make native
kernels compute wrong results (``cppnpu.faults``).
"""

from __future__ import annotations

from cppnpu import faults

# Read CPPNPU_FAULTS first: a malformed value fails the import before torch changes.
_FAULTY_OPS = faults.from_environment()

from cppnpu.registration import register  # noqa: E402
from cppnpu.runtime import (  # noqa: E402
    DEVICE_TYPE,
    device_count,
    get_device_name,
    is_available,
    memory_allocated,
)

register()
faults.set_faulty_ops(_FAULTY_OPS)

__version__ = "0.1.0"

__all__ = [
    "DEVICE_TYPE",
    "device_count",
    "faults",
    "get_device_name",
    "is_available",
    "memory_allocated",
]
