"""OpInfo's database (``torch.testing._internal.common_methods_invocations``), built without scipy.

The database imports scipy only for the references and skips of PyTorch's own test suite
(``TEST_SCIPY``), which the kit never reads: its references are torch's own CPU results, and no
OpInfo sample is made with scipy. Importing scipy costs each process that builds the database
about 1.5 s of CPU, and every run has two (the judge and the worker's fork server, through the
tiers' preloads). So scipy is refused while the database is built and importable again after it:
a vendor's module, or any library, may import it afterwards as anywhere. Where scipy was imported
before, nothing changes.

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
UNUSED_MODULES = ("scipy",)
#: The database's module.
DATABASE_MODULE = "torch.testing._internal.common_methods_invocations"


@contextmanager
def unused_modules_refused() -> Iterator[None]:
    """``UNUSED_MODULES`` not imported yet refused inside the block, importable again after
    it."""
    refused = tuple(name for name in UNUSED_MODULES if name not in sys.modules)
    for name in refused:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        for name in refused:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


with unused_modules_refused():
    importlib.import_module(DATABASE_MODULE)
