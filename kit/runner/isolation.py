"""The judge's interpreter: no code of the vendor's Python installation runs in it.

A vendor's distribution can reach every Python process of its environment without being
imported: a ``.pth`` file in site-packages (each ``import`` line runs at start-up), a
``sitecustomize.py`` or ``usercustomize.py`` on the path, ``PYTHONPATH`` and ``PYTHONSTARTUP``,
the user site, PyTorch's device-backend autoload (every ``torch.backends`` entry point runs
when torch is imported), the kit's own ``ckit.flows`` entry points, and the dynamic loader
(``LD_PRELOAD``: a library whose symbols replace torch's own). The judge is started so that none
of them does:

- Python's isolated mode (``-I``: no ``PYTHON*`` variables, no user site, no script directory)
  without the ``site`` module (``-S``: no ``.pth`` file, no ``sitecustomize``);
- ``sys.path``: the kit's own root and the environment's site-packages, then the other
  directories the kit's process imports from (the user site, what ``.pth`` files added), as
  plain directories: torch and the kit's other dependencies import as usual, a vendor package
  found there is importable but never imported, and a directory a ``.pth`` file inserted ahead
  of site-packages no longer shadows what is installed there;
- the environment: ``TORCH_DEVICE_BACKEND_AUTOLOAD=0``, ``CKIT_NO_VENDOR_CODE=1``
  (``kit.vendor_code``: no ``ckit.flows`` entry point loads) and no ``LOADER_INJECTION``
  variable. Other variables stay: ``TORCH_*``/``OMP_*`` settings tune torch but load no code,
  ``LD_LIBRARY_PATH`` only says where the libraries torch links are found.

What remains: the interpreter, the directories on the judge's path and the libraries torch
links. A module installed under a name the judge imports (torch, numpy, the kit's other
dependencies) in site-packages, or outside it where site-packages lacks that name, like a
vendor rewriting torch's own files on disk, changes CPU's answers in every process; the deploy
tier's pinned-torch check and the golden re-run at audit are there to catch it. And the
orchestrator that starts the judge is the environment's ordinary interpreter, where start-up
hooks do run: a hook written against the kit itself (rather than against torch) is a vendor
controlling its own machine.
"""

from __future__ import annotations

import os
import site
import sys
from pathlib import Path

import kit
from kit.vendor_code import NO_VENDOR_CODE_VARIABLE

#: PyTorch's switch for its device-backend autoload (``torch.backends`` entry points).
AUTOLOAD_VARIABLE = "TORCH_DEVICE_BACKEND_AUTOLOAD"
#: The dynamic loader's ways to put a library into a process before its own (glibc's ``ld.so``).
LOADER_INJECTION = ("LD_PRELOAD", "LD_AUDIT")


def site_directories() -> list[str]:
    """What the judge adds to the interpreter's own ``sys.path`` (the standard library, which
    ``-S`` keeps): the kit's root and the environment's site-packages first, then the other
    directories this process imports from (the user site, what ``.pth`` files added), as plain
    directories (``-S`` runs none of their ``.pth`` files). A directory only makes modules
    importable; the judge imports none of the vendor's, and one outside site-packages can add
    a module the judge imports but never replace one installed there. Left out:
    ``PYTHONPATH``'s entries (the caller's, not the environment's) and the directory of the
    running script."""
    kit_root = str(Path(kit.__file__).resolve().parent.parent)
    excluded = {entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry}
    excluded |= {"", os.path.dirname(os.path.abspath(sys.argv[0])) if sys.argv[0] else ""}
    ordered = [kit_root]  # whatever the script's directory: ``python -c`` in the checkout
    for entry in [*site.getsitepackages(), *sys.path]:
        if entry not in excluded and entry not in ordered and os.path.isdir(entry):
            ordered.append(entry)
    return ordered


def isolated_command(module: str, args: list[str]) -> list[str]:
    """``python -m module args`` in an interpreter no vendor start-up hook reaches."""
    bootstrap = (
        f"import sys; sys.path += {site_directories()!r}; import runpy; "
        f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)"
    )
    return [sys.executable, "-I", "-S", "-c", bootstrap, *args]


def isolated_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` without the dynamic loader's injection, with PyTorch's device-backend autoload
    and the kit's vendor entry points off (``-I`` ignores ``PYTHON*`` itself)."""
    kept = {name: value for name, value in env.items() if name not in LOADER_INJECTION}
    return {**kept, AUTOLOAD_VARIABLE: "0", NO_VENDOR_CODE_VARIABLE: "1"}
