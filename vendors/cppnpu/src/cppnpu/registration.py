"""Loading the compiled library and naming the device after it."""

from __future__ import annotations

import importlib
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


def refuse_another_torch() -> None:
    """The library runs only with the torch it was compiled against (its C++ ABI)."""
    try:  # written by setup.py at build time
        built_with = importlib.import_module("cppnpu._built_with").TORCH_VERSION
    except ImportError:
        return  # built before the build recorded it: the loader's own error, if any, stands
    if built_with != torch.__version__:
        raise ImportError(
            f"cppnpu was compiled against torch {built_with}, this is torch "
            f"{torch.__version__}: rebuild it with `ckit vendors install cppnpu`"
        )


def register() -> None:
    """Load the kernels, name PrivateUse1 ``cppnpu`` and install ``torch.cppnpu``."""
    refuse_another_torch()
    # load_library registers the library's kernels, allocator, guard and hooks (static
    # initializers): the C++ side needs no Python bindings.
    torch.ops.load_library(str(library_path()))
    torch.utils.rename_privateuse1_backend(runtime.DEVICE_TYPE)
    torch._register_device_module(runtime.DEVICE_TYPE, runtime)
    # tensor.cppnpu(), tensor.is_cppnpu, module.cppnpu(), storage methods.
    torch.utils.generate_methods_for_privateuse1_backend()
    # Module.to("cppnpu") would replace each Parameter by a new one (a PrivateUse1 TensorImpl
    # is not shallow-copy compatible with CPU's), so weights a model ties (an LM head and its
    # embedding) would come apart and train apart; swapping the tensors in place keeps every
    # Parameter, and so every tie, as CPU and CUDA do.
    torch.__future__.set_swap_module_params_on_conversion(True)
