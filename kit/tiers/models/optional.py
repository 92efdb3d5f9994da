"""Optional model sources: a package that may be absent, making its cases NOT_APPLICABLE."""

from __future__ import annotations

import importlib
from types import ModuleType


def import_optional(package: str) -> ModuleType:
    return importlib.import_module(package)


def why_unimportable(package: str, display_name: str) -> str | None:
    """None when ``package`` imports; otherwise the one-line reason its cases cannot run."""
    try:
        import_optional(package)
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.split(".")[0] == package:
            return f"{display_name} is not installed (optional model source)"
        return _broken(display_name, exc)
    except Exception as exc:  # a present but broken package is the environment's problem
        return _broken(display_name, exc)
    return None


def _broken(display_name: str, exc: BaseException) -> str:
    first_line = (str(exc).strip().splitlines() or [""])[0]
    problem = f"{type(exc).__name__}: {first_line}"
    return f"{display_name} is installed but cannot be imported ({problem})"
