"""OpInfo's database (``torch.testing._internal.common_methods_invocations``), built without scipy.

The database imports scipy only for the references and skips of PyTorch's own test suite
(``TEST_SCIPY``), which the kit never reads: its references are torch's own CPU results, and no
OpInfo sample is made with scipy. Importing scipy costs each process that builds the database
about 1.5 s of CPU, and every run has two (the judge and the worker's fork server, through the
tiers' preloads). So scipy is refused while the database is built and importable again after it:
a vendor's module, or any library, may import it afterwards as anywhere. Where scipy was imported
before, or PyTorch's probe found it already (``TEST_SCIPY``, in a process that imported
PyTorch's test utilities first), nothing changes.

A refused module is ``None`` in ``sys.modules``, as Python documents: an import of it raises
``ModuleNotFoundError`` and ``importlib.util.find_spec`` answers None, so PyTorch's probe takes
it as not installed.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager

#: What the database is built without.
SCIPY = "scipy"
#: The database's module, and the module whose ``TEST_SCIPY`` it reads (set when imported).
DATABASE_MODULE = "torch.testing._internal.common_methods_invocations"
PROBING_MODULE = "torch.testing._internal.common_utils"


def _scipy_refusable() -> bool:
    """Whether scipy can still be refused: not imported, and not found already by PyTorch's
    probe (a database built after ``TEST_SCIPY`` said True imports scipy, and must find it)."""
    probing = sys.modules.get(PROBING_MODULE)
    return SCIPY not in sys.modules and not getattr(probing, "TEST_SCIPY", False)


@contextmanager
def scipy_refused() -> Iterator[None]:
    """scipy refused inside the block where it can be (``_scipy_refusable``), importable again
    after it."""
    refused = _scipy_refusable()
    if refused:
        sys.modules[SCIPY] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        if refused and SCIPY in sys.modules and sys.modules[SCIPY] is None:
            del sys.modules[SCIPY]


with scipy_refused():
    importlib.import_module(DATABASE_MODULE)
