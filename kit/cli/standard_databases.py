"""``ckit standard show``'s table of PyTorch's test databases: what the installed release ships
(OpInfos, ModuleInfos, OptimizerInfos), what the standard's locked unit list runs, why the rest
is not run, the unit tests per source and the release's core ATen opset.

Every number is counted from the databases (``kit.tiers.unit.databases``), the standard's locked
list and the release's core opset (``kit.attribution.op_names``), each listed once per torch
version by an isolated child and cached: the first show on a machine takes the child's seconds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypedDict

from kit.attribution.op_names import release_core_ops
from kit.standard import Standard
from kit.tiers.unit.databases import DatabaseRow, DatabaseRowJson, database_rows, installed_entries
from kit.tiers.unit.locked_ids import refused_ids
from kit.tiers.unit.unit_id import TIER, UnitId


class DatabaseTableJson(TypedDict):
    release: str
    databases: list[DatabaseRowJson]
    unit_tests: dict[str, int]
    core_aten_ops: int | None


@dataclass(frozen=True)
class DatabaseTable:
    """The installed ``release``'s databases against ``standard``'s locked unit list."""

    standard: Standard
    release: str
    rows: tuple[DatabaseRow, ...]
    #: The locked unit tests per source (``opinfo``, ``opspec``).
    unit_tests: Mapping[str, int]
    #: The release's core ATen overloads; None where torch could not list them.
    core_ops: frozenset[str] | None

    def to_json(self) -> DatabaseTableJson:
        return {"release": self.release, "databases": [row.to_json() for row in self.rows],
                "unit_tests": dict(self.unit_tests),
                "core_aten_ops": None if self.core_ops is None else len(self.core_ops)}


def database_table(standard: Standard) -> DatabaseTable | None:
    """The table; None where the standard has no unit list or torch cannot list its
    databases."""
    if TIER not in standard.test_lists or not standard.test_list_path(TIER).exists():
        return None
    listed = installed_entries()
    if listed is None:
        return None
    release, entries = listed
    unit_ids = standard.test_ids(TIER)
    sources = Counter(unit.source for t in unit_ids if (unit := UnitId.read(t)) is not None)
    # Here, not at the top: the unit config's variants import torch, and every ckit command
    # builds the parser that imports this module.
    from kit.tiers.unit.config import sweep_exclusions

    rows = database_rows(entries, unit_ids, refused_ids(standard), sweep_exclusions(standard))
    return DatabaseTable(standard, release, rows, dict(sources.most_common()),
                         release_core_ops(release))


def database_lines(table: DatabaseTable | None) -> list[str]:
    """The table as terminal lines; one line saying why where there is none."""
    if table is None:
        return ["test databases: not listed (no unit list, or torch could not list them)"]
    standard = table.standard
    other = (f"; the standard certifies {standard.torch_release}"
             if table.release != standard.torch_release else "")
    lines = [f"PyTorch's test databases (torch {table.release} installed{other}) against "
             f"standard {standard.version}'s unit list:"]
    lines += [f"  {_row_text(row)}" for row in table.rows]
    total = sum(table.unit_tests.values())
    per_source = ", ".join(f"{n} {source}" for source, n in table.unit_tests.items())
    lines.append(f"unit tests: {total} in total ({per_source})")
    if table.core_ops is not None:
        packets = len({op.split(".", 1)[0] for op in table.core_ops})
        lines.append(f"core ATen opset of torch {table.release}: {len(table.core_ops)} "
                     f"overloads of {packets} ops (tagged torch.Tag.core)")
    return lines


def _row_text(row: DatabaseRow) -> str:
    database = row.database
    names = f" ({row.names} names)" if row.names != row.shipped else ""
    not_run = sum(row.not_run.values())
    why = "; ".join(f"{reason}: {n}" for reason, n in row.not_run.items())
    return (f"{database.entries} ({database.name}): {row.shipped} shipped{names}, {row.run} run, "
            f"{not_run} not run" + (f" ({why})" if why else ""))
