"""Where each value of a merged ``standard.yaml`` came from, so a refusal names that file.

A standard that extends another is read as one merged document (``kit.standard.inheritance``),
but a wrong value belongs to the file that set it: a parent's typo is the parent's to fix. A
``ChainNode`` is a ``kit.config_reader.Node`` of the merged document that carries, per file of
the chain (the child first), the same place in that file; each step down takes the source and
key path of the first file that sets the key, following the merge's own rules: a mapping
continues into the parents' mappings, a list of named items (``grades``) into the parents' items
of the same name, and anything else (a list, a value, a ``null``) hides what lies below it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from kit.config_reader import Node


def is_named_list(value: Any) -> bool:
    """A non-empty list whose items are all mappings with a ``name``: merged item by item."""
    return isinstance(value, list) and bool(value) and all(
        isinstance(item, dict) and "name" in item for item in value
    )


def merges(upper: Any, lower: Any) -> bool:
    """Whether ``upper`` (a child's value) merges with ``lower`` (its parent's) or replaces it."""
    both_mappings = isinstance(upper, dict) and isinstance(lower, dict)
    return both_mappings or (is_named_list(upper) and is_named_list(lower))


@dataclass(frozen=True)
class Layer:
    """One file's value at a place of the merged document, and that place in the file."""

    source: str
    path: tuple[str, ...]
    value: Any

    def child(self, key: str | int, merged: Any) -> Layer | None:
        """This file's value one step down (``merged``: the merged value there), or None when
        the file sets nothing there."""
        if isinstance(self.value, dict) and isinstance(key, str) and key in self.value:
            return Layer(self.source, (*self.path, key), self.value[key])
        if isinstance(self.value, list) and isinstance(key, int):
            index = self._index(key, merged)
            if index is not None:
                return Layer(self.source, (*self.path, str(index)), self.value[index])
        return None

    def _index(self, key: int, merged: Any) -> int | None:
        if is_named_list(self.value) and isinstance(merged, dict) and "name" in merged:
            names = [item["name"] for item in self.value]
            return names.index(merged["name"]) if merged["name"] in names else None
        return key if 0 <= key < len(self.value) else None


@dataclass(frozen=True)
class ChainNode(Node):
    """A node of a merged document whose ``source`` and ``path`` are those of the file that
    set its value (``layers``: that file's place first, then the places it merges over)."""

    layers: tuple[Layer, ...] = ()

    def child(self, key: str | int, value: Any) -> Node:
        found = _descend(self.layers, key, value)
        if not found:  # no file sets it (a missing key): where its mapping is
            return dataclasses.replace(self, value=value, path=(*self.path, str(key)), layers=())
        first = found[0]
        return dataclasses.replace(
            self, value=value, source=first.source, path=first.path, layers=found
        )

    def labelled(self, label: str) -> Node:
        layers = tuple(dataclasses.replace(layer, path=_labelled(layer.path, label))
                       for layer in self.layers)
        return dataclasses.replace(self, path=_labelled(self.path, label), layers=layers)


def _descend(layers: tuple[Layer, ...], key: str | int, merged: Any) -> tuple[Layer, ...]:
    found: list[Layer] = []
    for layer in layers:
        step = layer.child(key, merged)
        if step is None:
            continue
        if found and not merges(found[-1].value, step.value):
            break
        found.append(step)
    return tuple(found)


def _labelled(path: tuple[str, ...], label: str) -> tuple[str, ...]:
    *parents, last = path or ("",)
    return (*parents, f"{last} ({label})".lstrip())
