"""The judge's interpreter: no code of the vendor's Python installation runs in it.

A vendor's distribution can reach every Python process of its environment without being
imported: a ``.pth`` file in site-packages (each ``import`` line runs at start-up), a
``sitecustomize.py`` or ``usercustomize.py`` on the path, ``PYTHONPATH`` and ``PYTHONSTARTUP``,
the user site, and PyTorch's device-backend autoload (every ``torch.backends`` entry point runs
when torch is imported). The judge is started so that none of them does:

- Python's isolated mode (``-I``: no ``PYTHON*`` variables, no user site, no script directory)
  without the ``site`` module (``-S``: no ``.pth`` file, no ``sitecustomize``);
- ``sys.path``: the kit's own root and the directories the kit's process imports from (its
  site-packages, system ones included, and what their ``.pth`` files added), as plain
  directories: torch and the kit's other dependencies import as usual, and a vendor package
  found there is importable but never imported;
- ``TORCH_DEVICE_BACKEND_AUTOLOAD=0``.

What remains is the interpreter and the packages installed beside the kit's dependencies: a
vendor that replaces torch's own files on disk changes CPU's answers everywhere, which the deploy
tier's pinned-torch check and the golden re-run at audit are there to catch.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import kit

#: PyTorch's switch for its device-backend autoload (``torch.backends`` entry points).
AUTOLOAD_VARIABLE = "TORCH_DEVICE_BACKEND_AUTOLOAD"


def site_directories() -> list[str]:
    """What the judge adds to the interpreter's own ``sys.path`` (the standard library, which
    ``-S`` keeps): the kit's root, then the directories this process imports from, as plain
    directories (``-S`` runs none of their ``.pth`` files). A directory only makes modules
    importable; the judge imports none of the vendor's. Left out: ``PYTHONPATH``'s entries
    (the caller's, not the environment's) and the directory of the running script."""
    kit_root = str(Path(kit.__file__).resolve().parent.parent)
    excluded = {entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry}
    excluded |= {"", os.path.dirname(os.path.abspath(sys.argv[0])) if sys.argv[0] else ""}
    ordered = [kit_root]
    for entry in sys.path:
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
    """``env`` with PyTorch's device-backend autoload off (``-I`` ignores ``PYTHON*``)."""
    return {**env, AUTOLOAD_VARIABLE: "0"}
