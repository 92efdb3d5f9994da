"""Checking a vendor's options for a flow against the keys the flow takes."""

from __future__ import annotations

from collections.abc import Collection

from kit.flows.interface import FlowOptions


def unknown_option(flow: str, options: FlowOptions, known: Collection[str]) -> str | None:
    """The problem with the first key of ``options`` that ``flow`` does not take, or None."""
    for key in sorted(map(str, options)):
        if key not in known:
            takes = ", ".join(sorted(known)) or "none"
            return f"flow {flow} has no option {key!r} (it takes: {takes})"
    return None
