"""OpInfo's database (``torch.testing._internal.common_methods_invocations``), built without scipy,
hypothesis and ``torch._dynamo``.

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

Hypothesis is refused the same way where it is not imported yet: PyTorch's test utilities import
it only to register the settings profiles of PyTorch's own property tests (``common_utils``,
which warns with an ``ImportWarning``, ignored by default, where it is missing), and it costs each
process that builds the database about 0.15 s of CPU.

PyTorch's ``common_device_type`` imports ``torch._inductor.utils`` for one list of names
(``GPU_TYPES``), and that import brings ``torch._inductor`` and ``torch._dynamo`` (about 2 s of
CPU in each of the two processes) that running and judging eager tests never use. So while the
database is built, ``torch._inductor`` stands in as a package that runs no ``__init__`` (its real
directory, so any other submodule still loads for real) and ``torch._inductor.utils`` as a module
holding that list, read from PyTorch's own source; both are gone afterwards, and the first real
use (the compile tier, ``torch.compile``) imports the real ones. Where the list is not a literal
in the source (another release), or ``torch._inductor`` was imported before, nothing changes.
"""

from __future__ import annotations

import ast
import importlib
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: What the database is built without.
SCIPY = "scipy"
HYPOTHESIS = "hypothesis"
#: The database's module, and the module whose ``TEST_SCIPY`` it reads (set when imported).
DATABASE_MODULE = "torch.testing._internal.common_methods_invocations"
PROBING_MODULE = "torch.testing._internal.common_utils"
#: The package built without, and its module whose one list PyTorch's test utilities import.
INDUCTOR = "torch._inductor"
INDUCTOR_UTILS = "torch._inductor.utils"
GPU_TYPES = "GPU_TYPES"


def _scipy_refusable() -> bool:
    """Whether scipy can still be refused: not imported, and not found already by PyTorch's
    probe (a database built after ``TEST_SCIPY`` said True imports scipy, and must find it)."""
    probing = sys.modules.get(PROBING_MODULE)
    return SCIPY not in sys.modules and not getattr(probing, "TEST_SCIPY", False)


@contextmanager
def _standing_in(stand_ins: dict[str, types.ModuleType | None]) -> Iterator[None]:
    """``sys.modules`` holding ``stand_ins`` inside the block (None: the module refused); each
    one still there is gone after it, so the real module imports again."""
    sys.modules.update(stand_ins)  # type: ignore[arg-type]
    try:
        yield
    finally:
        for name, stand_in in stand_ins.items():
            if name in sys.modules and sys.modules[name] is stand_in:
                del sys.modules[name]


@contextmanager
def scipy_and_hypothesis_refused() -> Iterator[None]:
    """scipy refused inside the block where it can be (``_scipy_refusable``), and hypothesis where
    it is not imported yet; both importable again after it."""
    refused: dict[str, types.ModuleType | None] = {SCIPY: None} if _scipy_refusable() else {}
    if HYPOTHESIS not in sys.modules:
        refused[HYPOTHESIS] = None
    with _standing_in(refused):
        yield


def _inductor_directory() -> Path:
    import torch  # already imported by then, for the database; found without importing inductor

    return Path(torch.__file__).parent / "_inductor"


def _gpu_types(directory: Path) -> list[str] | None:
    """``GPU_TYPES`` as ``torch._inductor.utils`` assigns it, where that is a literal list."""
    try:
        tree = ast.parse((directory / "utils.py").read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(target, ast.Name)
                                                and target.id == GPU_TYPES
                                                for target in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return None
            return value if isinstance(value, list) else None
    return None


@contextmanager
def inductor_deferred() -> Iterator[None]:
    """``torch._inductor`` and ``torch._inductor.utils`` stood in for inside the block where
    they can be (not imported yet, the list found); the real ones importable after it."""
    directory = _inductor_directory()
    gpu_types = None if INDUCTOR in sys.modules else _gpu_types(directory)
    if gpu_types is None:
        yield
        return
    package = types.ModuleType(INDUCTOR)
    package.__path__ = [str(directory)]
    utils = types.ModuleType(INDUCTOR_UTILS)
    setattr(utils, GPU_TYPES, gpu_types)
    try:
        with _standing_in({INDUCTOR: package, INDUCTOR_UTILS: utils}):
            yield
    finally:
        torch = sys.modules["torch"]
        if vars(torch).get("_inductor") is package:
            delattr(torch, "_inductor")


with scipy_and_hypothesis_refused(), inductor_deferred():
    importlib.import_module(DATABASE_MODULE)
