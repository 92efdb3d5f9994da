"""Standards that extend each other: reading a ``standard.yaml`` and the chain of its parents.

A standard directory holds a ``standard.yaml``. It may say ``extends: <version>`` (a sibling
directory of the same standards root) and then carries only what changes. The rules:

``standard.yaml`` merges with its parent's, the child's values winning:

- a mapping merges key by key, recursively (``tolerances.float16`` added beside ``float32``;
  ``grades`` keep every field the child does not set);
- a key the child sets to ``null`` (``~``) is removed from the merged standard;
- a list replaces the parent's list whole (``never_skip``, ``reasons``, ``required.<tier>``),
  except a list whose items are all mappings with a ``name`` (``grades``) in both files: those
  merge item by item by name, in the parent's order, an item of a new name appended at the end;
- ``extends`` is never inherited, and ``version`` neither: every file states its own version,
  which must be the name of its directory;
- ``torch_release`` is inherited like any key; a child may set another (a standard per PyTorch
  release extends the previous one and names its release), no extra flag needed.

Every other file a standard names (tier files ``unit.yaml``, ``models.yaml``, ``flows.yaml``,
``ops/`` specs, the locked ``tests/*.txt`` lists, ``NUMERICS.md``, ``report.schema.json``,
``acceptance.yaml``, ``gate.yaml``) is not merged: it is looked up in the child's directory
first, then up the chain (``Standard.file``); ``ops/`` specs are looked up file by file. A
child's ``ckit standard lock`` writes its lists into its own directory.

Refused, each in one line naming the file: a parent that is no standard of the same root, a
chain that comes back to a standard it left (a cycle), and a file whose ``version`` is not its
directory's name. ``StandardSource.node`` reads the merged document, each value
refused naming the file that set it (``kit.standard.origins``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit.config_reader import Node
from kit.errors import InputError
from kit.json_shape import ParsedMapping
from kit.standard.origins import ChainNode, Layer, is_named_list

STANDARD_FILE = "standard.yaml"
#: A standard's version: the name of its directory under the standards root.
VERSION_PATTERN = re.compile(r"v[0-9]+")
#: The key naming a parent; never inherited.
EXTENDS = "extends"
#: Keys each file states for itself.
_OWN_KEYS = frozenset({EXTENDS, "version"})


@dataclass(frozen=True)
class Member:
    """One standard of a chain: its directory and its own ``standard.yaml``, as parsed."""

    directory: Path
    data: ParsedMapping

    @property
    def source(self) -> Path:
        return self.directory / STANDARD_FILE

    @property
    def stated_version(self) -> Any:
        return self.data.get("version")


@dataclass(frozen=True)
class StandardSource:
    """A standard's merged ``standard.yaml`` and its chain, the standard itself first."""

    data: ParsedMapping
    members: tuple[Member, ...]

    @property
    def node(self) -> Node:
        """The merged document, each value placed in the file that set it (the keys each file
        states for itself only in the standard's own file)."""
        own, *parents = self.members
        layers = (
            Layer(str(own.source), (), own.data),
            *(Layer(str(m.source), (), _inheritable(m.data)) for m in parents),
        )
        return ChainNode(self.data, str(own.source), layers=layers)

    def check_versions(self) -> None:
        """Every file of the chain states the name of its own directory as its version."""
        for member in self.members:
            if member.stated_version != member.directory.name:
                raise InputError(
                    f"{member.source}: version {member.stated_version!r} differs from its "
                    f"directory's name {member.directory.name!r}"
                )


def read_standard_source(directory: Path) -> StandardSource:
    """``directory``'s ``standard.yaml`` merged over its parents' (see the module docstring)."""
    chain = [_read_member(directory)]
    while (parent := _parent_name(chain[-1])) is not None:
        chain.append(_read_member(_parent_directory(chain, parent)))
    merged: ParsedMapping = {}
    for member in reversed(chain):
        merged = merge(merged, member.data)
    if "version" in chain[0].data:
        merged["version"] = chain[0].data["version"]
    return StandardSource(merged, tuple(chain))


def _read_member(directory: Path) -> Member:
    document = Node.read(directory / STANDARD_FILE)
    document.entries(what="a standard (a mapping of its fields)")
    return Member(directory, document.value)


def _parent_name(member: Member) -> str | None:
    if member.data.get(EXTENDS) is None:
        return None
    extends = Node.of(member.data, member.source).child(EXTENDS, member.data[EXTENDS])
    return extends.text(pattern=VERSION_PATTERN, expected="a standard's version such as v1")


def _parent_directory(chain: list[Member], parent: str) -> Path:
    child = chain[-1].directory
    source = child / STANDARD_FILE
    candidate = child.parent / parent
    if not (candidate / STANDARD_FILE).is_file():
        carried = sorted(
            (p.name for p in child.parent.iterdir()
             if VERSION_PATTERN.fullmatch(p.name) and (p / STANDARD_FILE).is_file()),
            key=lambda name: int(name[1:]),
        )
        raise InputError(
            f"{source}: extends unknown standard {parent!r} (the standards beside it: "
            f"{', '.join(carried) or 'none'})"
        )
    seen = [member.directory.resolve() for member in chain]
    if candidate.resolve() in seen:
        names = " -> ".join([*(member.directory.name for member in chain), parent])
        raise InputError(f"{source}: extends {parent!r}, a cycle: {names}")
    return candidate


def merge(parent: Mapping[str, Any], child: Mapping[str, Any]) -> ParsedMapping:
    """``child`` over ``parent``: mappings key by key, ``null`` removes, lists replace (named
    lists merge by name); the keys each file states for itself are not inherited."""
    return _merge_mapping(_inheritable(parent), _inheritable(child))


def _inheritable(data: Mapping[str, Any]) -> ParsedMapping:
    return {key: value for key, value in data.items() if key not in _OWN_KEYS}


def _merge_value(parent: Any, child: Any) -> Any:
    if isinstance(parent, dict) and isinstance(child, dict):
        return _merge_mapping(parent, child)
    if is_named_list(parent) and is_named_list(child):
        return _merge_named(parent, child)
    return child


def _merge_mapping(parent: ParsedMapping, child: ParsedMapping) -> ParsedMapping:
    merged = dict(parent)
    for key, value in child.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = _merge_value(merged.get(key), value)
    return merged


def _merge_named(parent: list[ParsedMapping], child: list[ParsedMapping]) -> list[Any]:
    changes = {item["name"]: item for item in child}
    merged = [_merge_mapping(item, changes.pop(item["name"], {})) for item in parent]
    return merged + [item for item in child if item["name"] in changes]
