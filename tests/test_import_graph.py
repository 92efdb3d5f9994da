"""No import cycle inside ``kit/``: every module's imports, including those inside functions
(only ``if TYPE_CHECKING:`` blocks are left out), form a graph without a cycle. A package's
``__init__`` counts as a module of its own, so a package importing its submodule that imports the
package back is a cycle too."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import kit

KIT = Path(kit.__file__).resolve().parent


def module_files() -> dict[str, Path]:
    """Every module of the kit by dotted name (the tier suites' test modules excluded)."""
    found = {}
    for path in KIT.rglob("*.py"):
        parts = list(path.relative_to(KIT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts[-1].startswith("test_") or parts[-1] == "conftest":
            continue
        found[".".join(parts)] = path
    return found


def imported_names(tree: ast.Module) -> Iterator[str]:
    skipped = {id(node) for block in ast.walk(tree) if _is_type_checking_block(block)
               for node in ast.walk(block)}
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def _is_type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def import_graph() -> dict[str, set[str]]:
    modules = module_files()

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        targets = {resolve(t) for t in imported_names(tree) if t.split(".")[0] == "kit"}
        graph[name] = {t for t in targets if t is not None and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while (member := stack.pop()) != node:
                component.append(member)
            component.append(node)
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_sees_the_kits_layers() -> None:
    graph = import_graph()
    assert "kit.tiers.registry" in graph["kit.runner.judge"]
    assert "kit.tiers.unit.cases" in graph["kit.tiers.unit.tier"]  # imported inside a method


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_inside_kit() -> None:
    assert cycles(import_graph()) == []
