"""The kit's import graph keeps its floor plan.

Every module's imports count, those inside functions and under ``if TYPE_CHECKING:`` included:

- no cycle: a package's ``__init__`` counts as a module of its own, so a package importing its
  submodule that imports the package back is a cycle too;
- no import up the layers: ARCHITECTURE.md's table ("Packages and their layers", lowest first) is
  the one list of layers, read here; every module is in one layer and imports only its own layer
  and those below;
- no package importing back up: packages (a module's folder) import each other one way only; a
  package importing its own subpackages (a registry listing them) is not an arrow back.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

import kit

KIT = Path(kit.__file__).resolve().parent
ARCHITECTURE = KIT.parent / "ARCHITECTURE.md"
TABLE_HEADING = "## Packages and their layers"


@cache
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
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


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
    """The strongly connected components of more than one node (Tarjan's algorithm)."""
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


def parse_layer_table(markdown: str) -> list[tuple[str, list[str]]]:
    """Each layer of the table under ``TABLE_HEADING``, lowest first, with the module prefixes
    its packages column names: the backquoted paths outside parentheses (those inside say what
    a package holds); a name without a folder is in the folder of the name before it."""
    section = markdown.split(TABLE_HEADING, 1)[1]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    layers = []
    for row in rows[2:]:  # the header and its rule
        layer, packages = (cell.strip() for cell in row.strip("|").split("|")[:2])
        layers.append((layer, _module_prefixes(packages)))
    return layers


def _module_prefixes(packages: str) -> list[str]:
    while (stripped := re.sub(r"\([^()]*\)", "", packages)) != packages:
        packages = stripped
    prefixes, folder = [], ""
    for path in re.findall(r"`([^`]+)`", packages):
        if "/" not in path.rstrip("/"):
            path = folder + path
        folder = path.rstrip("/").rpartition("/")[0] + "/"
        module = path.rstrip("/").removesuffix(".py").removesuffix("/__init__")
        prefixes.append(module.replace("/", "."))
    return prefixes


def layer_map() -> dict[str, int]:
    """Module prefix -> its layer's rank (0 lowest), from ARCHITECTURE.md's table."""
    table = parse_layer_table(ARCHITECTURE.read_text(encoding="utf-8"))
    return {prefix: rank for rank, (_, prefixes) in enumerate(table) for prefix in prefixes}


def layer_of(module: str, layers: dict[str, int]) -> int | None:
    """The rank of the longest prefix of ``module`` the table names; None: it names none. The
    root package (``kit/__init__.py``) names only itself, or every module would have a layer."""
    if module in layers:
        return layers[module]
    name = module.rpartition(".")[0]
    while "." in name:
        if name in layers:
            return layers[name]
        name = name.rpartition(".")[0]
    return None


def imports_up(graph: dict[str, set[str]], layers: dict[str, int],
               names: list[str]) -> list[str]:
    """Each import of a module from a higher layer, as ``a -> b (layer x imports layer y)``."""
    found = []
    for source in sorted(graph):
        for target in sorted(graph[source]):
            low, high = layer_of(source, layers), layer_of(target, layers)
            if low is not None and high is not None and high > low:
                layers_named = f"layer {names[low]} imports layer {names[high]}"
                found.append(f"{source} -> {target} ({layers_named})")
    return found


def package_of(module: str) -> str:
    """The package a module belongs to: itself for a package's ``__init__``, else its folder."""
    is_package = module_files()[module].name == "__init__.py"
    return module if is_package else module.rpartition(".")[0]


def _across(outer: str, inner: str) -> bool:
    """Whether package ``outer`` importing ``inner`` is an arrow between packages: not inside one,
    and not a package importing its own subpackage (a registry listing its parts)."""
    return inner != outer and not inner.startswith(outer + ".")


def package_graph(graph: dict[str, set[str]],
                  package: Callable[[str], str] = package_of) -> dict[str, set[str]]:
    """The packages' imports of each other, arrows across or back up only."""
    packages: dict[str, set[str]] = {}
    for source, targets in graph.items():
        outer = package(source)
        packages.setdefault(outer, set()).update(
            inner for inner in map(package, targets) if _across(outer, inner))
    return packages


def package_cycle_imports(graph: dict[str, set[str]],
                          package: Callable[[str], str] = package_of) -> list[str]:
    """The module imports that tie each package cycle, ``a -> b (package p imports package q)``."""
    found = []
    for members in cycles(package_graph(graph, package)):
        for source in sorted(graph):
            outer = package(source)
            for target in sorted(graph[source]):
                inner = package(target)
                if {outer, inner} <= set(members) and _across(outer, inner):
                    found.append(f"{source} -> {target} (package {outer} imports package {inner})")
    return found


def test_the_graph_sees_the_kits_layers() -> None:
    graph = import_graph()
    assert "kit.tiers.registry" in graph["kit.runner.judge"]
    assert "kit.tiers.unit.cases" in graph["kit.tiers.unit.tier"]  # imported inside a method


def test_the_graph_counts_type_checking_imports() -> None:
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import kit.paths\n")
    assert "kit.paths" in set(imported_names(tree))


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_table_parser_reads_folders_and_skips_what_packages_hold() -> None:
    table = (f"{TABLE_HEADING}\n\n| layer | packages | what |\n| --- | --- | --- |\n"
             "| base | `kit/__init__.py`, `errors.py` | `kit/not_a_layer.py` |\n"
             "| tiers | `kit/tiers/` (`interface.py`), `kit/flows/` (export) | x |\n")
    assert parse_layer_table(table) == [("base", ["kit", "kit.errors"]),
                                        ("tiers", ["kit.tiers", "kit.flows"])]


def test_the_root_package_is_no_layer_of_every_module() -> None:
    layers = {"kit": 0, "kit.tiers": 4}
    assert (layer_of("kit", layers), layer_of("kit.tiers.unit.cases", layers)) == (0, 4)
    assert layer_of("kit.errors", layers) is None


def test_a_lower_layer_importing_a_higher_one_is_named() -> None:
    found = imports_up({"kit.a": {"kit.b.c"}, "kit.b.c": {"kit.a"}}, {"kit.a": 0, "kit.b": 1},
                       ["base", "tiers"])
    assert found == ["kit.a -> kit.b.c (layer base imports layer tiers)"]


def test_packages_importing_each_other_are_named_and_a_registry_is_not() -> None:
    graph = {"kit.tiers.registry": {"kit.tiers.flows.tier"},
             "kit.tiers.flows.tier": {"kit.tiers"},
             "kit.tiers.flows.cases": {"kit.tiers.models.cases"},
             "kit.tiers.models.cases": {"kit.tiers.flows.subjects"},
             "kit.tiers.flows.subjects": set()}

    def package(module: str) -> str:
        return "kit.tiers" if module == "kit.tiers" else module.rpartition(".")[0]

    assert package_cycle_imports(graph, package) == [
        "kit.tiers.flows.cases -> kit.tiers.models.cases "
        "(package kit.tiers.flows imports package kit.tiers.models)",
        "kit.tiers.models.cases -> kit.tiers.flows.subjects "
        "(package kit.tiers.models imports package kit.tiers.flows)",
    ]


def test_no_import_cycle_inside_kit() -> None:
    assert cycles(import_graph()) == []


def test_every_module_is_in_a_layer_of_architecture_md() -> None:
    layers = layer_map()
    assert [name for name in sorted(module_files()) if layer_of(name, layers) is None] == []


def test_no_import_up_the_layers() -> None:
    names = [name for name, _ in parse_layer_table(ARCHITECTURE.read_text(encoding="utf-8"))]
    found = imports_up(import_graph(), layer_map(), names)
    assert not found, "imports up ARCHITECTURE.md's layers:\n" + "\n".join(found)


def test_no_package_imports_back_up() -> None:
    found = package_cycle_imports(import_graph())
    assert not found, "packages importing each other:\n" + "\n".join(found)
