"""Loading the compiled library and naming the device after it."""

from __future__ import annotations

from pathlib import Path

import torch

from cppnpu import runtime

#: The compiled library, built beside this module (``pip install`` of vendors/cppnpu).
LIBRARY_GLOB = "_C*.so"


def library_path() -> Path:
    found = sorted(Path(__file__).parent.glob(LIBRARY_GLOB))
    if not found:
        raise ImportError(
            f"cppnpu: the compiled library ({LIBRARY_GLOB}) is missing beside {__file__}; "
            "build it with `ckit vendors install cppnpu`"
        )
    return found[0]


def register() -> None:
    """Load the kernels, name PrivateUse1 ``cppnpu`` and install ``torch.cppnpu``."""
    # load_library registers the library's kernels, allocator, guard and hooks (static
    # initializers): the C++ side needs no Python bindings.
    torch.ops.load_library(str(library_path()))
    torch.utils.rename_privateuse1_backend(runtime.DEVICE_TYPE)
    torch._register_device_module(runtime.DEVICE_TYPE, runtime)
    # tensor.cppnpu(), tensor.is_cppnpu, module.cppnpu(), storage methods.
    torch.utils.generate_methods_for_privateuse1_backend()
