"""PyTorch's generic test databases against a standard's locked unit list: how many OpInfos
(``op_db``), ModuleInfos (``module_db``) and OptimizerInfos (``optim_db``) the installed release
ships, how many the standard runs, and why the others are not run (``ckit standard show``).

The databases take seconds to import, so they are listed once per torch version by an isolated
child and cached (``kit.attribution.op_names.release_listing``, the kit's one such mechanism);
what the standard runs comes from its locked ids (``unit/<source>/<key>/...``): nothing here is
a hand-kept count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import TypedDict

from kit.attribution.op_names import release_listing
from kit.tiers.unit.dtypes import UNIT_DTYPES
from kit.tiers.unit.module_ids import SOURCE as MODULE_SOURCE
from kit.tiers.unit.optim_ids import SOURCE as OPTIM_SOURCE
from kit.tiers.unit.optim_ids import UNJUDGED
from kit.tiers.unit.unit_id import OPINFO_SOURCE, SWEEP_SOURCE, UnitId

#: The child's program: one line per entry, tab-separated: the database, the entry's name, its
#: variant (an OpInfo's ``variant_test_name``) and its CPU dtypes (an OpInfo's).
_LIST_DATABASES = (
    "import sys, torch\n"
    "from torch.testing._internal.common_methods_invocations import op_db\n"
    "from torch.testing._internal.common_modules import module_db\n"
    "from torch.testing._internal.common_optimizers import optim_db\n"
    "def dtypes(o):\n"
    "    names = (str(d).removeprefix('torch.') for d in o.supported_dtypes('cpu'))\n"
    "    return ','.join(sorted(names))\n"
    "lines = ['\\t'.join(('op_db', o.name, o.variant_test_name, dtypes(o))) for o in op_db]\n"
    "lines += ['module_db\\t' + m.name + '\\t\\t' for m in module_db]\n"
    "lines += ['optim_db\\t' + o.name + '\\t\\t' for o in optim_db]\n"
    "sys.stdout.write('\\n'.join(lines))\n"
)

#: The listing's cache name; its number changes with the program's output format, so a cache
#: file an older kit wrote is never read as this one's.
_LISTING = "test-databases-1"


@dataclass(frozen=True)
class Database:
    """One of PyTorch's test databases: its name in ``torch.testing._internal``, what its
    entries are, and the source segments a unit id gives an entry of it."""

    name: str
    entries: str
    sources: tuple[str, ...]


#: The databases, in the order shown.
DATABASES = (
    Database("op_db", "OpInfos", (OPINFO_SOURCE, SWEEP_SOURCE)),
    Database("module_db", "ModuleInfos", (MODULE_SOURCE,)),
    Database("optim_db", "OptimizerInfos", (OPTIM_SOURCE,)),
)

#: Why an entry is not run, one phrase each.
NO_SOURCE = "the unit tier has no source of them"
NO_UNIT_DTYPE = "no dtype the unit tier tests on CPU"
NOT_LISTED = "not in the standard's unit list"
#: With a sweep (``kit.tiers.unit.sweep``): an OpInfo neither excluded nor with a test, whose
#: samples the kit could not build on the release (a sample function failing).
NOT_BUILT = "no sample the kit could build on this release"
#: With a sweep: an OpInfo it excludes, followed by the exclusion's reason.
EXCLUDED = "excluded"
#: An optimizer whose locked tests the kit decides NOT_APPLICABLE (``optim_ids.UNJUDGED``).
NOT_JUDGED = "not judged by the kit"
#: An entry each of whose locked tests CPU refuses on the standard's release
#: (``locked_ids.REFUSALS``), NOT_APPLICABLE by the kit's reason.
CPU_REFUSES = "CPU refuses every locked test of it"


class DatabaseRowJson(TypedDict):
    database: str
    entries: str
    shipped: int
    names: int
    run: int
    not_run: dict[str, int]


@dataclass(frozen=True)
class DatabaseRow:
    """One database against the standard: entries shipped (and distinct names), run by the
    standard, and those not run, per reason."""

    database: Database
    shipped: int
    names: int
    run: int
    not_run: Mapping[str, int]

    def to_json(self) -> DatabaseRowJson:
        return {"database": self.database.name, "entries": self.database.entries,
                "shipped": self.shipped, "names": self.names, "run": self.run,
                "not_run": dict(self.not_run)}


@dataclass(frozen=True)
class Entry:
    database: str
    name: str
    #: An OpInfo's ``variant_test_name`` ("" for none, and for other databases' entries).
    variant: str
    cpu_dtypes: frozenset[str]

    @property
    def key(self) -> str:
        """The entry as a unit id names it: ``name`` plus ``.<variant>`` if any."""
        return f"{self.name}.{self.variant}" if self.variant else self.name


def installed_entries() -> tuple[str, tuple[Entry, ...]] | None:
    """(release, entries) of the installed torch's databases; None without torch, or where the
    child could not list them."""
    listed = release_listing(_LISTING, _LIST_DATABASES)
    if listed is None:
        return None
    release, text = listed
    entries = []
    for line in text.splitlines():
        fields = line.split("\t")
        if len(fields) != 4:
            return None  # a cache file not of this program's writing: nothing trusted from it
        database, name, variant, dtypes = fields
        entries.append(Entry(database, name, variant, frozenset(filter(None, dtypes.split(",")))))
    return release, tuple(entries)


def database_rows(entries: Iterable[Entry], unit_ids: Iterable[str],
                  refused: Collection[str] = (),
                  excluded: Mapping[str, str] | None = None) -> tuple[DatabaseRow, ...]:
    """Each database's row against the locked ``unit_ids``, of which CPU refuses ``refused``
    (``locked_ids.refused_ids``); ``excluded``: where the standard sweeps every other OpInfo,
    the op keys it excludes and why (None: it runs only its unit list)."""
    run_keys: dict[str, set[str]] = {}
    for test_id in unit_ids:
        unit = UnitId.read(test_id)
        if unit is not None:
            run_keys.setdefault(unit.source, set())
            if test_id not in refused:
                run_keys[unit.source].add(unit.op)
    listed = tuple(entries)
    refused_keys = {unit.op for t in refused if (unit := UnitId.read(t)) is not None}
    rows = []
    for database in DATABASES:
        keys = [run_keys[s] for s in database.sources if s in run_keys]
        why_not = _Reasons(set().union(*keys) if keys else None, refused_keys,
                           excluded if database.name == "op_db" else None)
        rows.append(_row(database, [e for e in listed if e.database == database.name], why_not))
    return tuple(rows)


@dataclass(frozen=True)
class _Reasons:
    """What decides why a database's entry is not run."""

    #: Entry keys with a test (None: the unit tier has no source of the database).
    run_keys: set[str] | None
    refused_keys: set[str]
    #: Keys the standard's sweep excludes, with why (None: the standard has no sweep).
    excluded: Mapping[str, str] | None


def _row(database: Database, entries: Collection[Entry], why_not: _Reasons) -> DatabaseRow:
    reasons = Counter(reason for entry in entries
                      if (reason := _not_run_because(entry, why_not)) is not None)
    return DatabaseRow(database, shipped=len(entries),
                       names=len({entry.name for entry in entries}),
                       run=len(entries) - reasons.total(), not_run=dict(reasons.most_common()))


def _not_run_because(entry: Entry, why_not: _Reasons) -> str | None:
    """Why the standard does not run ``entry``; None where it does."""
    if why_not.run_keys is None:
        return NO_SOURCE
    if entry.database == "optim_db" and entry.name in UNJUDGED:
        return f"{NOT_JUDGED}: {UNJUDGED[entry.name].label}"
    if entry.key in why_not.run_keys:
        return None
    if entry.key in why_not.refused_keys:
        return CPU_REFUSES
    if entry.database == "op_db" and not entry.cpu_dtypes & set(UNIT_DTYPES):
        return NO_UNIT_DTYPE
    if why_not.excluded is None:
        return NOT_LISTED
    if entry.key in why_not.excluded:
        return f"{EXCLUDED}: {why_not.excluded[entry.key]}"
    return NOT_BUILT
