"""``details.dispatch``: the ops of one device call by where they ran (``kit.attribution``)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


class Where(enum.StrEnum):
    NATIVE = "native"
    FALLBACK = "fallback"
    DECOMPOSED = "decomposed"
    CPU = "cpu"


@dataclass(frozen=True)
class Dispatch:
    """The ops of one device call by where they ran (qualified overloads, sorted, unique)."""

    native: tuple[str, ...] = ()
    fallback: tuple[str, ...] = ()
    decomposed: tuple[str, ...] = ()
    cpu: tuple[str, ...] = ()

    def ops(self, where: Where) -> tuple[str, ...]:
        ops: tuple[str, ...] = getattr(self, where.value)
        return ops

    def to_json(self) -> dict[str, list[str]]:
        """``details.dispatch``: only the places some op ran (an empty call is ``{}``)."""
        return {where.value: list(self.ops(where)) for where in Where if self.ops(where)}

    @classmethod
    def from_json(cls, data: Any) -> Dispatch | None:
        """A record's ``details.dispatch`` read back; None where it is absent or malformed
        (a report is read, never trusted to be well formed)."""
        places = dispatch_places(data)
        if places is None:
            return None
        return cls(**{key: tuple(names) for key, names in places.items()})


_PLACES = frozenset(where.value for where in Where)


def dispatch_places(data: Any) -> Mapping[str, list[str]] | None:
    """``data`` if it is a well-formed ``details.dispatch`` (places of ``Where``, each a list of
    op names), else None: ``Dispatch.from_json``'s reading without the object, for code that
    reads every record of a report."""
    if not isinstance(data, Mapping) or not data.keys() <= _PLACES:
        return None
    for names in data.values():
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            return None
    return data
