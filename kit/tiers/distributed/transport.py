"""Where a run's collectives ran, counted from its distributed records (light: no torch).

Each distributed record's ``details.transport`` is the vendor profile's
``process_group_transport`` (``kit.vendors.profile.CollectiveTransport``), recorded by the
worker that ran the test: ``native`` (on the device's own buffers) or ``host-copy`` (the backend
copied the device tensors to the host and ran a CPU backend there). ``ckit show`` and
summary.md's "What ran on the device" say it in the one wording below: a host-copy collective
never counts as native on the device.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from kit.results import TRANSPORT_KEY
from kit.vendors.profile import CollectiveTransport


class CollectiveTransportsJson(TypedDict):
    """``ckit show --json``'s ``collectives``."""

    declared_by: str
    native: int
    host_copy: int


@dataclass(frozen=True)
class CollectiveTransports:
    """How many distributed tests ran their collectives natively, and how many on host copies."""

    native: int
    host_copy: int

    def words(self) -> str:
        """The one line every view says (the vendor's declaration, not the kit's measurement)."""
        return (f"collectives (as the vendor's profile declares): {self.native} distributed "
                f"test(s) ran natively on the device; {self.host_copy} ran on host copies of "
                "the device tensors, not natively")

    def to_json(self) -> CollectiveTransportsJson:
        return {"declared_by": "vendor profile", "native": self.native,
                "host_copy": self.host_copy}

    def sentence(self) -> str:
        """``words`` as a sentence (summary.md)."""
        words = self.words()
        return f"{words[0].upper()}{words[1:]}."


def collective_transports(details: Iterable[Mapping[str, Any]]) -> CollectiveTransports | None:
    """The counts over the records' ``details``; None where none says a transport (no
    distributed test ran, or a report older than the key)."""
    said = [found.get(TRANSPORT_KEY) for found in details]
    native = said.count(CollectiveTransport.NATIVE.value)
    host_copy = said.count(CollectiveTransport.HOST_COPY.value)
    if native + host_copy == 0:
        return None
    return CollectiveTransports(native, host_copy)
