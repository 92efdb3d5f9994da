"""Builds cppnpu's C++ library with PyTorch's own extension tooling.

The library is loaded with ``torch.ops.load_library`` (it only registers kernels and a few
``torch.ops.cppnpu`` ops), so it is built without Python bindings: ``py_limited_api`` keeps it
free of CPython symbols. Build it against the torch it will run with, hence no build isolation:

    pip install --no-build-isolation vendors/cppnpu     # what `ckit vendors install` runs
"""

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

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
    cmdclass={"build_ext": BuildExtension},
)
