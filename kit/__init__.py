"""Accelerator Conformance Kit: certifies an out-of-tree PyTorch backend against one standard."""

__version__ = "0.1.0"
#: The one PyTorch release this kit version certifies against.
TORCH_RELEASE = "2.13.0"
#: The standard this kit version implements (a directory under ``standards/``).
STANDARD_VERSION = "v1"
