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
- ``sys.path`` built from scratch: the standard library (what the ``-I -S`` interpreter finds
  from its own executable), then the kit's root and the environment's site-packages, each by
  its real path. Nothing is taken from the kit process's ``sys.path``: an entry of
  ``PYTHONPATH``, the user site or a directory a ``.pth`` file added never reaches the judge,
  however it is spelled (relative, ``.``, an empty entry, a trailing slash, ``//``, ``..``,
  ``~``, a symlink): torch imports optional modules at start-up (``opt_einsum``, ``dill``) that
  such a directory could supply. Site-packages is read as a plain directory: a vendor package
  found there is importable but never imported;
- the environment: ``TORCH_DEVICE_BACKEND_AUTOLOAD=0``, ``CKIT_NO_VENDOR_CODE=1``
  (``kit.vendor_code``: no ``ckit.flows`` entry point loads) and no ``LOADER_INJECTION``
  variable. Other variables stay: ``TORCH_*``/``OMP_*`` settings tune torch but load no code,
  ``LD_LIBRARY_PATH`` only says where the libraries torch links are found.

What remains: the interpreter, the directories on the judge's path and the libraries torch
links. A module installed under a name the judge imports (torch, numpy, the kit's other
dependencies) in site-packages, like a vendor rewriting torch's own files on disk, changes
CPU's answers in every process; the deploy tier's pinned-torch check and the golden re-run at
audit are there to catch it. And the orchestrator that starts the judge is the environment's
ordinary interpreter, where start-up hooks do run: a hook written against the kit itself
(rather than against torch) is a vendor controlling its own machine.
"""

from __future__ import annotations

import importlib.util
import os
import site
import sys
from pathlib import Path

import kit
from kit.errors import EnvironmentProblem
from kit.vendor_code import NO_VENDOR_CODE_VARIABLE

#: PyTorch's switch for its device-backend autoload (``torch.backends`` entry points).
AUTOLOAD_VARIABLE = "TORCH_DEVICE_BACKEND_AUTOLOAD"
#: The dynamic loader's ways to put a library into a process before its own (glibc's ``ld.so``).
LOADER_INJECTION = ("LD_PRELOAD", "LD_AUDIT")
#: What the judge must find in its own directories (the kit's dependencies it imports).
JUDGE_IMPORTS = ("torch", "numpy", "yaml")


def kit_root() -> str:
    """The directory holding the ``kit`` package, by its real path."""
    return os.path.realpath(Path(kit.__file__).parent.parent)


def site_directories() -> list[str]:
    """What the judge adds to its interpreter's standard library: the kit's root, then the
    environment's site-packages (``site.getsitepackages()``: the prefixes' own, never the user
    site), each by its real path, once. Built from these alone, never filtered out of
    ``sys.path``: a filter compares spellings, and a directory has many."""
    ordered: list[str] = []
    for entry in [kit_root(), *site.getsitepackages()]:
        real = os.path.realpath(entry)
        if real not in ordered and os.path.isdir(real):
            ordered.append(real)
    return ordered


def top_level_directory(name: str) -> str | None:
    """The real directory a top-level module ``name`` is imported from here; None if absent."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return None
    origin = Path(spec.origin)
    # A package's origin is its __init__.py: the directory on sys.path is two levels up.
    holder = origin.parent.parent if spec.submodule_search_locations is not None else origin.parent
    return os.path.realpath(holder)


def require_judge_imports(directories: list[str]) -> None:
    """Refuses a kit whose dependencies live outside the judge's directories (installed in the
    user site or a directory a ``.pth`` file adds): the judge could not import them."""
    for name in JUDGE_IMPORTS:
        found = top_level_directory(name)
        if found is not None and found not in directories:
            raise EnvironmentProblem(
                f"judge isolation: {name} is installed in {found}, outside the environment's "
                f"site-packages; install the kit and its dependencies into the environment "
                f"itself (not the user site, PYTHONPATH or a .pth-added directory)")


def isolated_command(module: str, args: list[str]) -> list[str]:
    """``python -m module args`` in an interpreter no vendor start-up hook reaches."""
    directories = site_directories()
    require_judge_imports(directories)
    bootstrap = (
        f"import sys; sys.path += {directories!r}; import runpy; "
        f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)"
    )
    return [sys.executable, "-I", "-S", "-c", bootstrap, *args]


def isolated_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` without the dynamic loader's injection, with PyTorch's device-backend autoload
    and the kit's vendor entry points off (``-I`` ignores ``PYTHON*`` itself)."""
    kept = {name: value for name, value in env.items() if name not in LOADER_INJECTION}
    return {**kept, AUTOLOAD_VARIABLE: "0", NO_VENDOR_CODE_VARIABLE: "1"}
