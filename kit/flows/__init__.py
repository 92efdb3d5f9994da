"""The one registry of flows: the built-in ones and those vendors add by entry point.

Built-ins: ``eager`` (the module as it is), ``executorch_xnnpack`` (fp32),
``executorch_xnnpack_int8`` (static per-channel int8 through the pt2e quantizer) and
``onnxruntime_cpu``. Importing this package imports neither torch nor a backend: each flow
imports its backend when it first needs it.

Adding a flow (vendors)
-----------------------
A vendor's distribution adds a flow with an entry point in group ``ckit.flows``
(``ENTRY_POINT_GROUP``); its name is the flow's id and it names a ``kit.flows.interface.Flow``
subclass, built with no arguments, whose ``name`` equals the entry point's name::

    [project.entry-points."ckit.flows"]
    acme_npu = "acme_ckit.flows:AcmeNpuFlow"

The flow then works like a built-in once a standard lists it in its ``flows.yaml`` (with its
criterion): vendor profiles claim it in ``flows:``, and the flows tier plans and runs it. A
claim of a flow the standard's flows tier does not run is refused when a run starts
(``kit.flows.config.refuse_untested_claims``): it would be signed as claimed, untested.

The registry imports the class whenever flows are listed (every profile load), so its module
should import the vendor's backend inside the flow's methods, not at import time; say
why the backend is missing in ``unavailable_reason``.

The judge never loads these entry points (``kit.vendor_code``): it judges a vendor's flow by
the evidence its worker left, reading only the built-in ``Flow`` defaults.

A name that is a built-in's or another distribution's, or an entry point that does not load
into a ``Flow`` subclass, is a one-line ``InputError`` naming the distribution, raised wherever
flows are read (loading a vendor profile, a standard).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib import metadata

from kit.errors import InputError
from kit.flows.availability import one_line
from kit.flows.interface import Flow
from kit.printable import printable
from kit.vendor_code import vendor_code_allowed

#: The entry point group vendors register their ``Flow`` subclasses under.
ENTRY_POINT_GROUP = "ckit.flows"

#: Built-in flows by name: ``module:class`` inside this package, imported when asked for.
BUILTIN_FLOWS: dict[str, str] = {
    "eager": "kit.flows.eager:EagerFlow",
    "executorch_xnnpack": "kit.flows.executorch_xnnpack:ExecutorchXnnpackFlow",
    "executorch_xnnpack_int8": "kit.flows.executorch_xnnpack:ExecutorchXnnpackInt8Flow",
    "onnxruntime_cpu": "kit.flows.onnxruntime_cpu:OnnxRuntimeCpuFlow",
}


def flow_names() -> tuple[str, ...]:
    """Every flow's name: the built-ins in their order, then the vendors' sorted."""
    return (*BUILTIN_FLOWS, *sorted(_vendor_flows()))


def get_flow(name: str) -> Flow:
    """A fresh instance of flow ``name``; ``InputError`` listing the known ones otherwise."""
    if name in BUILTIN_FLOWS:
        return _builtin(name)()
    vendor = _vendor_flows()
    if name not in vendor:
        known = ", ".join((*BUILTIN_FLOWS, *sorted(vendor)))
        raise InputError(f"unknown flow {name!r} (known: {known})")
    return vendor[name]()


def requires_delegation(name: str) -> bool:
    """Whether a program of flow ``name`` that delegated nothing is ``NOT_DELEGATED``, as the
    judge reads it without loading vendor code: a built-in flow's own answer, and for a vendor's
    flow the ``Flow`` interface's default (it must delegate: it exists to reach a backend)."""
    if name in BUILTIN_FLOWS:
        return _builtin(name).requires_delegation
    return Flow.requires_delegation


def _builtin(name: str) -> type[Flow]:
    module_name, class_name = BUILTIN_FLOWS[name].split(":")
    flow_class: type[Flow] = getattr(importlib.import_module(module_name), class_name)
    return flow_class


def _vendor_flows() -> dict[str, Callable[[], Flow]]:
    """The entry points of ``ENTRY_POINT_GROUP``, checked; read afresh on every call so a
    distribution installed during the process is seen. None in the judge, which loads no
    vendor code (``kit.vendor_code``)."""
    found: dict[str, Callable[[], Flow]] = {}
    if not vendor_code_allowed():
        return found
    owners: dict[str, str] = {}
    # Sorted, so that which of two clashing distributions is named first never varies.
    entries = sorted(metadata.entry_points(group=ENTRY_POINT_GROUP),
                     key=lambda entry: (entry.name, _distribution(entry)))
    for entry in entries:
        owner = _distribution(entry)
        if entry.name in BUILTIN_FLOWS:
            raise InputError(
                f"distribution {owner} registers flow {entry.name!r} under {ENTRY_POINT_GROUP}, "
                "the name of a built-in flow"
            )
        if entry.name in owners and owners[entry.name] != owner:
            raise InputError(
                f"distribution {owner} registers flow {entry.name!r} under {ENTRY_POINT_GROUP}, "
                f"already registered by distribution {owners[entry.name]}"
            )
        owners[entry.name] = owner
        found[entry.name] = _loaded(entry, owner)
    return found


def _loaded(entry: metadata.EntryPoint, owner: str) -> type[Flow]:
    where = f"flow {entry.name!r} of distribution {owner} ({printable(entry.value)})"
    try:
        flow_class = entry.load()
    except Exception as exc:  # noqa: BLE001 - any broken vendor code gets the same one line
        raise InputError(f"{where} cannot be loaded ({one_line(exc)})") from None
    if not (isinstance(flow_class, type) and issubclass(flow_class, Flow)):
        raise InputError(f"{where} is not a subclass of kit.flows.interface.Flow")
    if getattr(flow_class, "name", None) != entry.name:
        raise InputError(
            f"{where} has name {getattr(flow_class, 'name', None)!r}, not its entry point's name"
        )
    return flow_class


def _distribution(entry: metadata.EntryPoint) -> str:
    dist = entry.dist
    return "<unknown distribution>" if dist is None else printable(f"{dist.name} {dist.version}")


__all__ = ["BUILTIN_FLOWS", "ENTRY_POINT_GROUP", "Flow", "flow_names", "get_flow"]
