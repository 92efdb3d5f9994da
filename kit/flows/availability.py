"""Whether a flow's backend package imports here, said in one line.

Kept apart from ``kit.tiers.models.optional``: importing ``kit.tiers.models`` imports torch,
and the flow registry must stay light.
"""

from __future__ import annotations

import functools
import importlib


@functools.lru_cache(maxsize=32)
def missing_package(package: str, flow: str) -> str | None:
    """None when ``package`` imports; else why ``flow`` cannot run (absent or broken)."""
    try:
        importlib.import_module(package)
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.split(".")[0] == package.split(".")[0]:
            return f"{package} is not installed (flow {flow})"
        return _broken(package, flow, exc)
    except Exception as exc:  # noqa: BLE001 - a present but broken package is the environment's
        return _broken(package, flow, exc)
    return None


def first_missing(packages: tuple[str, ...], flow: str) -> str | None:
    """The reason for the first of ``packages`` that does not import, or None."""
    for package in packages:
        reason = missing_package(package, flow)
        if reason is not None:
            return reason
    return None


def one_line(exc: BaseException) -> str:
    """``ExcType: first line of the message``, printable and bounded."""
    from kit.printable import printable

    first = (str(exc).strip().splitlines() or [""])[0][:300]
    return printable(f"{type(exc).__name__}: {first}" if first else type(exc).__name__)


def _broken(package: str, flow: str, exc: BaseException) -> str:
    return f"{package} is installed but cannot be imported ({one_line(exc)}) (flow {flow})"
