"""The operator names of the installed torch release, to refuse a report's ``details.dispatch``
that names an op no dispatcher of that release has (a vendor writing the list itself), and the
release's core ATen opset (the overloads tagged ``torch.Tag.core``), which the views count a
run's attribution against (``kit.report.core_aten``).

Read without importing torch into the reader: verify and the audit read whole runs' reports
and import no torch. Each listing comes once per torch version from a child interpreter
(isolated, with no device-backend autoload, so no installed vendor package adds ops of its own),
then from a cache file beside the user's other caches; a process reads that file once. Other
facts of a release that take a torch import are listed by the same mechanism
(``release_listing``: the unit tier's test databases, ``kit.tiers.unit.databases``).
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

#: The child's program: every operator the dispatcher knows once torch and each module of
#: ``torch.nn.modules`` are imported: some register their custom ops only when imported
#: (``torch_nn::_linear_cross_entropy_batch_chunked``, which linear_cross_entropy calls).
_LIST_OPS = (
    "import importlib, pkgutil, sys, torch, torch.nn.modules as modules\n"
    "for found in pkgutil.iter_modules(modules.__path__):\n"
    "    importlib.import_module(f'torch.nn.modules.{found.name}')\n"
    "sys.stdout.write('\\n'.join(sorted(torch._C._dispatch_get_all_op_names())))\n"
)
#: The listing's cache name; its number changes with the program, so that a list an older
#: kit wrote (a bare ``import torch``'s) is never read as this one's.
_OPERATORS = "operators-2"
#: The child's program: the overloads tagged core, named as the dispatcher names them (``aten::mm``
#: for a default overload), so that they compare with ``details.dispatch``'s names.
_LIST_CORE_OPS = (
    "import sys, torch\n"
    "def tagged(name):\n"
    "    packet, _, overload = name.partition('::')[2].partition('.')\n"
    "    found = getattr(getattr(torch.ops.aten, packet, None), overload or 'default', None)\n"
    "    return found is not None and torch.Tag.core in found.tags\n"
    "sys.stdout.write('\\n'.join(sorted(n for n in torch._C._dispatch_get_all_op_names()\n"
    "                                    if n.startswith('aten::') and tagged(n))))\n"
)
#: How long the child may take (importing torch on a loaded machine takes seconds).
_LIST_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class OpNames:
    """The operators of one torch release: qualified overloads (``aten::add.Tensor``,
    ``aten::mm``) and their packets (``aten::add``), which ``decomposed`` names."""

    release: str
    overloads: frozenset[str]
    packets: frozenset[str]

    def unknown(self, names: Iterable[str]) -> list[str]:
        """Those of ``names`` that are neither an overload nor a packet of the release, sorted."""
        return sorted({n for n in names if n not in self.overloads and n not in self.packets})


def base_release(version: str) -> str:
    """``2.13.0`` of ``2.13.0+cpu``: the release, without the local build label."""
    return version.split("+", 1)[0]


def installed_torch_version() -> str | None:
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ckit"


def _listed_by_torch(program: str) -> str:
    """What ``program`` writes, from a child interpreter that imports torch alone."""
    env = {**os.environ, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
    done = subprocess.run([sys.executable, "-I", "-c", program], capture_output=True,
                          text=True, env=env, timeout=_LIST_TIMEOUT_S, check=True)
    return done.stdout


def _cached_listing(kind: str, program: str, version: str) -> str:
    """What ``program`` lists of torch ``version``, from the cache file of ``kind``, listed once
    per version (written whole, then renamed: a reader never sees half a list)."""
    path = _cache_dir() / f"{kind}-torch-{version}.txt"
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        pass
    listed = _listed_by_torch(program)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent,
                                         delete=False) as out:
            out.write(listed)
        os.replace(out.name, path)
    except OSError:
        pass  # an unwritable cache costs the next process the child again, nothing else
    return listed


@functools.cache
def release_listing(kind: str, program: str) -> tuple[str, str] | None:
    """(release, text): what ``program`` (Python run in an isolated child that may import torch)
    writes about the installed torch, listed once per version and ``kind`` (the cache file's
    name); None without torch, or where the child fails."""
    version = installed_torch_version()
    if version is None:
        return None
    try:
        return base_release(version), _cached_listing(kind, program, version)
    except (OSError, subprocess.SubprocessError):
        return None


@functools.cache
def installed_op_names() -> OpNames | None:
    """The installed torch's operators; None without torch, or where it cannot list them."""
    listed = release_listing(_OPERATORS, _LIST_OPS)
    if listed is None:
        return None
    release, text = listed
    overloads = frozenset(line for line in text.splitlines() if line)
    if not overloads:
        return None
    packets = frozenset(name.split(".", 1)[0] for name in overloads)
    return OpNames(release, overloads, packets)


def release_op_names(release: str) -> OpNames | None:
    """The operators of torch ``release`` where it is the installed one; None otherwise (another
    release's operators are not this interpreter's to know)."""
    names = installed_op_names()
    return names if names is not None and names.release == base_release(release) else None


def release_core_ops(release: str) -> frozenset[str] | None:
    """The core ATen opset of torch ``release`` (overloads tagged ``torch.Tag.core``, named as
    the dispatcher names them) where it is the installed one; None otherwise."""
    listed = release_listing("core-operators", _LIST_CORE_OPS)
    if listed is None or listed[0] != base_release(release):
        return None
    return frozenset(line for line in listed[1].splitlines() if line) or None
