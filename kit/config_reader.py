"""Reading parsed YAML configs into typed values, strictly, with one error style.

Every config the kit reads (vendor profiles, skip manifests, acceptance and gate policies, tier
files, image descriptions, trust roots, the released-kits list) is read through ``Node``: a
parsed value with the file it came from and its dotted path in that file. ``kit.yamlio`` stays
the file layer (bounded, strict YAML); this is the layer that says what the values must be.

Every refusal is one ``InputError`` line ``<file>: <dotted.path>: <expected>, got <found>``;
list items are numbered from 0 (``skips.2.expires``). A key a mapping does not know is refused
naming it and the known keys, so a misspelt key never silently drops out, and a quoted
``"true"`` is not a boolean.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import re
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from kit.errors import InputError
from kit.yamlio import load_yaml

T = TypeVar("T")
D = TypeVar("D")
P = ParamSpec("P")

#: A found value is shown up to this many characters, so a message stays one short line.
_SHOWN_CHARS = 80


def _found(value: Any) -> str:
    """How a message shows a value the file holds (as its YAML reads, not as Python prints)."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dt.datetime):
        return f"the date and time {value.isoformat()}"
    if isinstance(value, dt.date):
        return f"the date {value.isoformat()}"
    shown = repr(value)
    return shown if len(shown) <= _SHOWN_CHARS else shown[: _SHOWN_CHARS - 3] + "..."


def _bounds(minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f" from {minimum:g} to {maximum:g}"
    if minimum is not None:
        return f" >= {minimum:g}"
    return f" <= {maximum:g}" if maximum is not None else ""


@dataclass(frozen=True)
class Node:
    """A value of a config file and where it is: ``source`` and its ``path`` of keys."""

    value: Any
    #: The file the value was read from, as messages name it.
    source: str
    path: tuple[str, ...] = ()
    #: ``source`` already ends with a path (``within``): keys continue it after a dot.
    continues: bool = False

    @classmethod
    def read(cls, path: Path) -> Node:
        """The document of the YAML file ``path`` (``kit.yamlio.load_yaml``)."""
        return cls(load_yaml(path), str(path))

    @classmethod
    def of(cls, value: Any, source: Path) -> Node:
        """``value``, parsed from ``source`` elsewhere, as the top of its document."""
        return cls(value, str(source))

    @classmethod
    def within(cls, value: Any, where: str) -> Node:
        """``value`` at ``where``, a ``<file>: <path>`` prefix a caller was handed (parsers
        that still pass locations as text): messages read ``<where>: <problem>``."""
        return cls(value, where, continues=True)

    # Where ------------------------------------------------------------------------------------

    @property
    def where(self) -> str:
        """The dotted path of the value in its file; empty at the top."""
        return ".".join(self.path)

    @property
    def location(self) -> str:
        """``<file>: <dotted.path>``, the prefix of this node's messages."""
        if not self.path:
            return self.source
        return f"{self.source}{'.' if self.continues else ': '}{self.where}"

    def error(self, problem: str) -> InputError:
        """The one-line refusal of this value: ``<file>: <path>: <problem>``."""
        return InputError(f"{self.location}: {problem}")

    def expected(self, what: str) -> InputError:
        """``<file>: <path>: expected <what>, got <the value>``."""
        return self.error(f"expected {what}, got {_found(self.value)}")

    def child(self, key: str | int, value: Any) -> Node:
        """``value`` one key (or list index) below this node."""
        return dataclasses.replace(self, value=value, path=(*self.path, str(key)))

    def labelled(self, label: str) -> Node:
        """This node with ``label`` after its last key (``ops.3 (add)``), for messages."""
        *parents, last = self.path or ("",)
        return dataclasses.replace(self, path=(*parents, f"{last} ({label})".lstrip()))

    # Mappings ---------------------------------------------------------------------------------

    def section(
        self, required: Iterable[str] = (), optional: Iterable[str] = (), *, what: str = "a mapping"
    ) -> Section:
        """A mapping of a fixed vocabulary: every ``required`` key, any of ``optional``, and
        no other key; ``what`` names the mapping when the value is not one."""
        data = self._mapping(what)
        required, optional = tuple(required), tuple(optional)
        known = (*required, *optional)
        for key in data:
            if key not in known:
                raise self.child(key, data[key]).error(
                    f"unknown key; the keys here are {', '.join(known)}"
                )
        for key in required:
            if key not in data:
                raise self.child(key, None).error("missing; this key is required")
        return Section(self, data)

    def entries(self, *, non_empty: bool = False, what: str = "a mapping") -> tuple[
        tuple[str, Node], ...
    ]:
        """A mapping whose keys the file chooses (names of models, tiers, flows), in its order."""
        wanted = f"a non-empty {what.removeprefix('a ')}" if non_empty else what
        data = self._mapping(wanted)
        if non_empty and not data:
            raise self.expected(wanted)
        return tuple((key, self.child(key, value)) for key, value in data.items())

    def _mapping(self, what: str) -> dict[str, Any]:
        if not isinstance(self.value, dict):
            raise self.expected(what)
        for key in self.value:
            if not isinstance(key, str):
                raise self.error(f"keys are text, got the key {_found(key)}")
        return self.value

    # Lists ------------------------------------------------------------------------------------

    def items(self, *, non_empty: bool = False, what: str = "a list") -> tuple[Node, ...]:
        """A list, each item a node numbered from 0."""
        if not isinstance(self.value, list) or (non_empty and not self.value):
            raise self.expected(f"a non-empty {what.removeprefix('a ')}" if non_empty else what)
        return tuple(self.child(index, item) for index, item in enumerate(self.value))

    def strings(
        self,
        *,
        pattern: re.Pattern[str] | None = None,
        expected: str = "text",
        non_empty: bool = False,
        unique: bool = False,
    ) -> tuple[str, ...]:
        """A list of text items (each as ``text`` reads it); ``unique``: none listed twice."""
        values = tuple(
            item.text(pattern=pattern, expected=expected)
            for item in self.items(non_empty=non_empty, what=f"a list of {expected}")
        )
        if unique:
            self._refuse_repeats(values)
        return values

    def choices(
        self, options: Collection[str], *, non_empty: bool = False, unique: bool = False
    ) -> tuple[str, ...]:
        """A list of items each one of ``options``."""
        what = f"a list of {', '.join(options)}"
        values = tuple(item.choice(options) for item in self.items(non_empty=non_empty, what=what))
        if unique:
            self._refuse_repeats(values)
        return values

    def _refuse_repeats(self, values: tuple[str, ...]) -> None:
        for index, value in enumerate(values):
            if value in values[:index]:
                raise self.child(index, value).error(f"{value!r} is listed twice")

    # Scalars ----------------------------------------------------------------------------------

    def text(
        self,
        *,
        pattern: re.Pattern[str] | None = None,
        expected: str = "text",
        empty_ok: bool = False,
    ) -> str:
        """Text (YAML's quoted or plain string) matching all of ``pattern``; empty only when
        ``empty_ok``."""
        value = self.value
        if not isinstance(value, str) or not (value or empty_ok):
            raise self.expected(expected)
        if pattern is not None and not pattern.fullmatch(value):
            raise self.expected(expected)
        return value

    def choice(self, options: Collection[str]) -> str:
        """Text that is one of ``options``."""
        if not isinstance(self.value, str) or self.value not in options:
            raise self.expected(f"one of {', '.join(options)}")
        return self.value

    def flag(self) -> bool:
        """true or false; a quoted ``"true"`` is text, not a flag (``bool("false")`` is True)."""
        if not isinstance(self.value, bool):
            raise self.expected("true or false (unquoted)")
        return self.value

    def integer(
        self,
        *,
        minimum: int | None = None,
        maximum: int | None = None,
        what: str = "a whole number",
    ) -> int:
        """A whole number within the bounds (each inclusive); true and 1.0 are not one.
        ``what`` names it in messages (``a whole number of days``)."""
        value = self.value
        if isinstance(value, bool) or not isinstance(value, int) or not _within(
            value, minimum, maximum
        ):
            raise self.expected(what + _bounds(minimum, maximum))
        return value

    def number(
        self,
        *,
        minimum: float | None = None,
        maximum: float | None = None,
        what: str = "a number",
    ) -> float:
        """A finite number within the bounds (each inclusive); true and ``.nan`` are not one."""
        value = self.value
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or not _within(value, minimum, maximum)
        ):
            raise self.expected(what + _bounds(minimum, maximum))
        return float(value)

    def date(self, *, quoted: bool = False) -> dt.date:
        """A date YYYY-MM-DD, as YAML reads an unquoted one; ``quoted``: a quoted one too.

        A date and time is not a date; an impossible date (2027-02-30) is text to YAML.
        """
        value = self.value
        if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
            return value
        if quoted and isinstance(value, str):
            try:
                return dt.date.fromisoformat(value)
            except ValueError:
                pass
        raise self.expected("a real date YYYY-MM-DD" + ("" if quoted else " (unquoted)"))


def _within(value: float, minimum: float | None, maximum: float | None) -> bool:
    return (minimum is None or value >= minimum) and (maximum is None or value <= maximum)


@dataclass(frozen=True)
class Section:
    """A mapping ``Node.section`` checked: its keys are known and the required ones present."""

    node: Node
    data: dict[str, Any]

    def __getitem__(self, key: str) -> Node:
        """The node of ``key``; refused as missing when the file does not give it."""
        if key not in self.data:
            raise self.node.child(key, None).error("missing; this key is required")
        return self.node.child(key, self.data[key])

    def get(self, key: str) -> Node | None:
        """The node of ``key``, or None when the file does not give it."""
        return self.node.child(key, self.data[key]) if key in self.data else None

    def optional(
        self,
        key: str,
        default: D,
        read: Callable[Concatenate[Node, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T | D:
        """``read(node, ...)`` of ``key``'s node (``Node.text``, ...), or ``default`` when the
        file does not give the key."""
        node = self.get(key)
        return default if node is None else read(node, *args, **kwargs)

    def keys(self) -> Iterator[str]:
        """The keys the file gives, in its order."""
        return iter(self.data)
