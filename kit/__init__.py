"""Accelerator Conformance Kit: certifies an out-of-tree PyTorch backend against a standard.

The standards the kit carries, and the PyTorch release each certifies, live under
``standards/`` (``kit.standard.catalogue``); nothing here names them.
"""

__version__ = "0.1.0"
