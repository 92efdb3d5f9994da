"""The one way the kit reads YAML: bounded, strict, and failing as one line naming the file.

Every YAML file the kit reads (standard, op specs, unit and model configs, vendor profiles, skip
manifests) goes through ``load_yaml``. A vendor's files are untrusted input, so reading is
bounded before parsing starts: only a regular file (a FIFO or ``/dev/zero`` would hang or fill
memory), at most ``MAX_YAML_BYTES``, and aliases may not expand the document past
``MAX_YAML_NODES`` nodes or ``MAX_YAML_DEPTH`` levels (a 600-byte "billion laughs" would
otherwise cost minutes and gigabytes in whatever walks the data next). Duplicate keys, which
silently change meaning, are refused too.
"""

from __future__ import annotations

import copy
import functools
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from kit.errors import InputError

#: Far above any real profile, manifest or standard file (the largest, unit.yaml, is ~25 KiB).
MAX_YAML_BYTES = 4 * 1024 * 1024
#: Nodes of the document with every alias copied out; the kit's own files have a few thousand.
MAX_YAML_NODES = 250_000
#: Nesting levels, aliases copied out; deeper data would exhaust Python's recursion limit.
MAX_YAML_DEPTH = 64


_ALIASES_AS_COPIES = "counting each alias as a copy of its anchor"


class _Refused(Exception):
    """A document the kit will not load; ``str()`` is the reason, without the file name."""


class _StrictLoader(yaml.SafeLoader):
    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        # The composer recurses once per level: refuse deep nesting before Python's stack does.
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                raise _Refused(f"nested deeper than {MAX_YAML_DEPTH} levels")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        _check_expansion(node)  # before construction, so nothing expanded is ever built
        return self.construct_document(node)


def _children(node: yaml.Node) -> Iterator[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        yield from node.value
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield key
            yield value


def _check_expansion(root: yaml.Node) -> None:
    """Measure the document as if every alias were a copy, without making one.

    An alias is the very node its anchor names, so the composed document is a graph; sizes are
    memoised per node, which makes this linear in the file however far the aliases multiply.
    """
    measured: dict[int, tuple[int, int]] = {}  # id(node) -> (nodes, depth) once expanded
    open_nodes: set[int] = set()  # the current path from the root: meeting one again is a cycle
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            open_nodes.discard(id(node))
            parts = [measured[id(child)] for child in _children(node)]
            nodes = 1 + sum(count for count, _ in parts)
            depth = 1 + max((levels for _, levels in parts), default=0)
            if nodes > MAX_YAML_NODES:
                raise _Refused(f"more than {MAX_YAML_NODES} nodes, {_ALIASES_AS_COPIES}")
            if depth > MAX_YAML_DEPTH:
                raise _Refused(f"nested deeper than {MAX_YAML_DEPTH} levels, {_ALIASES_AS_COPIES}")
            measured[id(node)] = (nodes, depth)
        elif id(node) in open_nodes:
            raise _Refused("an alias refers to a node that contains it (a recursive document)")
        elif id(node) not in measured:
            open_nodes.add(id(node))
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node))


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            duplicate = key in seen
        except TypeError:  # a list or mapping used as a key
            raise yaml.constructor.ConstructorError(
                None, None, f"unhashable key {key!r}", key_node.start_mark
            ) from None
        if duplicate:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


def _construct_timestamp(loader: _StrictLoader, node: yaml.ScalarNode) -> Any:
    try:
        return loader.construct_yaml_timestamp(node)
    except ValueError:
        # An impossible date such as 2027-02-30 stays text, so schema checks name the field.
        return loader.construct_scalar(node)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)

_FILE_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)


def _require_regular_file(path: Path, info: os.stat_result) -> None:
    if stat.S_ISREG(info.st_mode):
        return
    kind = next((name for test, name in _FILE_KINDS if test(info.st_mode)), "not a file")
    raise InputError(f"{path}: expected a regular YAML file, got {kind}")


def _require_within_cap(path: Path, size: int) -> None:
    if size > MAX_YAML_BYTES:
        raise InputError(
            f"{path}: larger than the {MAX_YAML_BYTES // (1024 * 1024)} MiB limit for a YAML file"
        )


def read_capped(path: Path) -> bytes:
    """The bytes of a regular file of at most ``MAX_YAML_BYTES``; never blocks on a pipe."""
    try:
        _require_regular_file(path, os.stat(path))  # /dev/zero or a FIFO is never opened
        # O_NONBLOCK: should a FIFO replace the file after the stat, opening it cannot hang.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        _require_regular_file(path, info)
        _require_within_cap(path, info.st_size)
        data = handle.read(MAX_YAML_BYTES + 1)  # +1: a file that grew past the cap is caught
    _require_within_cap(path, len(data))
    return data


@functools.lru_cache(maxsize=32)
def _parse(text: str) -> Any:
    """Parsed once per distinct text: verifying many reports reads the same standard each time."""
    return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - strict SafeLoader subclass


def load_yaml(path: Path) -> Any:
    """Parse ``path``; any problem becomes a one-line ``InputError`` naming the file."""
    data = read_capped(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (invalid byte at offset {exc.start})") from None
    try:
        return copy.deepcopy(_parse(text))  # a copy: callers may change what they are given
    except _Refused as exc:
        raise InputError(f"{path}: YAML refused: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"{path}: invalid YAML{where}: {problem}") from None
