"""Builds cppnpu's C++ library with PyTorch's own extension tooling.

The library is loaded with ``torch.ops.load_library`` (it only registers kernels and a few
``torch.ops.cppnpu`` ops), so it is built without Python bindings: ``py_limited_api`` keeps it
free of CPython symbols. Build it against the torch it will run with, hence no build isolation:

    pip install --no-build-isolation vendors/cppnpu     # what `ckit vendors install` runs
"""

from pathlib import Path

import torch
from setuptools import setup
from setuptools.command.build_py import build_py
from torch.utils.cpp_extension import BuildExtension, CppExtension


class BuildPyWithTorchVersion(build_py):
    """Records the torch the library is compiled against (``cppnpu/_built_with.py``): its C++
    ABI is that release's, so ``import cppnpu`` refuses another torch in one line."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "cppnpu" / "_built_with.py"
        target.write_text(f"TORCH_VERSION = {torch.__version__!r}\n", encoding="utf-8")


setup(
    ext_modules=[
        CppExtension(
            name="cppnpu._C",
            sources=["csrc/cppnpu.cpp"],
            # -fwrapv: integer kernels wrap on overflow like CPU's (signed overflow is otherwise
            # undefined behaviour in C++, and the standard checks int32 overflow). -g0: no debug
            # information: a third less compile time, a 17x smaller library.
            extra_compile_args=["-O2", "-fwrapv", "-g0"],
            py_limited_api=True,
        )
    ],
    cmdclass={"build_ext": BuildExtension, "build_py": BuildPyWithTorchVersion},
)
