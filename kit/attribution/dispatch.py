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
        if not isinstance(data, Mapping) or not set(data) <= {w.value for w in Where}:
            return None
        places: dict[str, tuple[str, ...]] = {}
        for key, names in data.items():
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                return None
            places[key] = tuple(names)
        return cls(**places)
