"""The versioned standard: tolerances, skip policy, required tests and grade thresholds.

A standard may extend another and carry only what changes (``kit.standard.inheritance`` has the
rules); every file it names is found through ``Standard.file``. Which standards the kit carries,
and which one a run uses, is ``kit.standard.catalogue``'s.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from kit.config_reader import Node
from kit.errors import InputError
from kit.numerics.criteria import Tolerance
from kit.numerics.model import NumericsRules
from kit.numerics.parsing import read_numerics, read_tolerance
from kit.numerics.training import TrainingBudget, read_training_budget
from kit.patterns import matches_any
from kit.results import Status, declared_status
from kit.standard.catalogue import current_version, standard_directory, torch_release_of
from kit.standard.inheritance import EXTENDS, StandardSource, read_standard_source
from kit.test_ids import tier_of
from kit.yamlio import load_yaml

__all__ = ["BODY_FORMAT", "REPORT_FORMATS", "REPORT_JSON_FORMAT", "REPORT_SCHEMA_FILE", "Grade",
           "Standard", "Tolerance", "current_torch_release", "load_standard", "torch_release_of"]

#: How a standard's runs write and sign their report (``report_format`` in standard.yaml):
#: ``report-json`` (v1, v2: report.json and the files it renders, each a signed subject) or
#: ``body`` (``kit.report.body``: a head and JSON Lines records, the only signed subjects).
REPORT_FORMATS = ("report-json", "body")
REPORT_JSON_FORMAT, BODY_FORMAT = REPORT_FORMATS


@dataclass(frozen=True)
class Grade:
    name: str
    #: What summary.md shows before the grade's name.
    mark: str
    min_pass_rate: float
    all_required_passed: bool
    #: -1 means unlimited.
    max_policy_violations: int
    #: The largest share of any one tier's tests the skip manifest may skip (0 to 1).
    max_skipped_share: float
    #: The run's torch must be the release the standard certifies (see ``Standard.certifies``).
    certified_torch_release: bool
    #: What ``ckit run`` exits with when a run gets this grade.
    exit_code: int
    #: The run must have judged skip expiry on the system clock's date (no ``CKIT_TODAY``).
    real_clock: bool


@dataclass(frozen=True)
class Standard:
    version: str
    torch_release: str
    #: The standard's release date: skip-manifest entries live at most ``max_skip_days`` past it.
    released: dt.date
    directory: Path
    #: End-to-end tolerances (model tier, deploy smoke checks): atol + rtol * |reference|.
    tolerances: dict[str, Tolerance]
    #: The unit tier's per-op error model (``kit.numerics.model``).
    numerics: NumericsRules
    timeouts: dict[str, float]
    tier_files: dict[str, str]
    test_lists: dict[str, str]
    never_skip: tuple[str, ...]
    skip_reasons: tuple[str, ...]
    max_skip_days: int
    required: dict[str, tuple[str, ...]]
    grades: tuple[Grade, ...]
    #: The directories of the standards this one extends, its parent first.
    inherited: tuple[Path, ...] = ()
    #: The model tier's training-step budget (``numerics.training``); None: no training tests.
    training: TrainingBudget | None = None
    #: One of ``REPORT_FORMATS``; a standard that declares none keeps today's (``report-json``).
    report_format: str = REPORT_JSON_FORMAT

    @property
    def directories(self) -> tuple[Path, ...]:
        """Where the standard's files are looked up, in order: its own directory, then up."""
        return (self.directory, *self.inherited)

    @property
    def extends(self) -> str | None:
        """The version of the standard this one extends."""
        return self.inherited[0].name if self.inherited else None

    def file(self, name: str) -> Path:
        """``name`` (a path relative to a standard directory) in the first directory of the
        chain that has it; in the standard's own directory when none has it."""
        for directory in self.directories:
            candidate = directory / name
            if candidate.exists():
                return candidate
        return self.directory / name

    @property
    def statuses(self) -> tuple[Status, ...]:
        """The statuses this standard's reports may hold, in ``Status`` order: those its report
        schema (``$defs.status``) declares. A status it predates is recorded as its fallback
        (``record_status``), so a run under an older standard writes the reports it always did.
        """
        return _declared_statuses(self.file(REPORT_SCHEMA_FILE))

    def record_status(self, status: Status) -> Status:
        """``status`` as this standard records it (``kit.results.STATUS_FALLBACKS``)."""
        return declared_status(status, self.statuses)

    def tolerance(self, dtype: str) -> Tolerance:
        try:
            return self.tolerances[dtype]
        except KeyError:
            raise InputError(f"standard {self.version}: no tolerance for dtype {dtype!r}") from None

    def tier_config(self, tier: str) -> Any:
        """The parsed tier file (e.g. ``unit.yaml``) of ``tier``."""
        return load_yaml(self.tier_file(tier))

    def carries(self, tier: str) -> bool:
        """Whether the standard has ``tier`` at all (a time limit or a list for it): a standard
        older than a tier (v1, before the compile and distributed tiers) has none of its tests,
        and its reports never name it."""
        return tier in self.timeouts or tier in self.test_lists

    def tier_file(self, tier: str) -> Path:
        """The file defining ``tier``'s tests (e.g. ``unit.yaml``), found up the chain."""
        return self.file(self.tier_files[tier])

    def test_list_path(self, tier: str) -> Path:
        """The locked list of ``tier`` the standard judges by: its own, else its parent's."""
        return self.file(self.test_lists[tier])

    def own_test_list_path(self, tier: str) -> Path:
        """Where ``ckit standard lock`` writes ``tier``'s list: the standard's own directory."""
        return self.directory / self.test_lists[tier]

    def test_ids(self, tier: str) -> list[str]:
        """The locked list of test ids of ``tier`` (empty if the tier has no list).

        A line is ``<id>`` or ``<id> <input digest>`` (``ckit standard lock``); only ids return.
        """
        if tier not in self.test_lists:
            return []
        path = self.test_list_path(tier)
        if not path.exists():
            raise InputError(f"{path}: missing; regenerate it with `ckit standard lock`")
        return list(_locked_ids(path.read_text(encoding="utf-8")))

    def input_digests(self, tier: str) -> Mapping[str, str]:
        """Per locked id of ``tier``, the input digest its list records (none for a tier whose
        list records no digests, or has no list); parsed once per list text (a canary asks
        for every test)."""
        if tier not in self.test_lists:
            return {}
        path = self.test_list_path(tier)
        return _locked_digests(path.read_text(encoding="utf-8")) if path.exists() else {}

    def is_required(self, test_id: str) -> bool:
        tier = tier_of(test_id)
        return matches_any(test_id, self.required.get(tier, ()))

    def may_skip(self, test_id: str) -> bool:
        return not matches_any(test_id, self.never_skip)

    @property
    def latest_skip_expiry(self) -> dt.date:
        """The last ``expires`` date a skip-manifest entry may carry."""
        return self.released + dt.timedelta(days=self.max_skip_days)

    def certifies(self, torch_version: str) -> bool:
        """Whether a run on ``torch_version`` (``torch.__version__``) can be certified."""
        return torch_release_of(torch_version) == self.torch_release

    def grade(self, name: str) -> Grade:
        for grade in self.grades:
            if grade.name == name:
                return grade
        raise InputError(f"standard {self.version}: no grade named {name!r}")


#: The standard's report schema (found up its chain like every file but ``standard.yaml``).
REPORT_SCHEMA_FILE = "report.schema.json"


@functools.lru_cache(maxsize=8)
def _declared_statuses(schema: Path) -> tuple[Status, ...]:
    try:
        declared = json.loads(schema.read_text(encoding="utf-8"))["$defs"]["status"]["enum"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{schema}: no readable $defs.status enum ({exc})") from None
    unknown = sorted(set(declared) - {s.value for s in Status})
    if unknown:
        raise InputError(f"{schema}: $defs.status names statuses this kit does not have: {unknown}")
    return tuple(s for s in Status if s.value in declared)


@functools.lru_cache(maxsize=8)
def _locked_ids(text: str) -> tuple[str, ...]:
    """The ids of a locked list's text, parsed once: regrading reads the lists for every report."""
    lines = text.splitlines()
    return tuple(line.split(" ", 1)[0] for line in lines if line and not line.startswith("#"))


@functools.lru_cache(maxsize=8)
def _locked_digests(text: str) -> Mapping[str, str]:
    lines = (line.split() for line in text.splitlines() if line and not line.startswith("#"))
    return MappingProxyType({fields[0]: fields[1] for fields in lines if len(fields) == 2})


def current_torch_release() -> str:
    """The PyTorch release the kit's current standard certifies (what installs pin)."""
    return load_standard().torch_release


def load_standard(version: str | None = None, directory: Path | None = None) -> Standard:
    """The standard in ``directory``, else the carried standard ``version``, else the kit's
    current standard (``kit.standard.catalogue``), merged with the standards it extends.

    Read once per process while the ``standard.yaml`` files of its chain hold the same bytes:
    verifying a report loads its standard more than once, and a verifier loads the same
    standard for every report."""
    directory = directory or standard_directory(version or current_version())
    loaded = _LOADED.get(directory)
    if loaded is not None and loaded.sources == _chain_bytes(loaded.chain):
        return loaded.standard
    source = read_standard_source(directory)
    standard = _build(source, directory)
    # After the fields: a malformed field is named before a misnamed directory.
    source.check_versions()
    chain = tuple(member.source for member in source.members)
    sources = _chain_bytes(chain)
    if None not in sources:
        if len(_LOADED) >= _MAX_LOADED:
            _LOADED.clear()
        _LOADED[directory] = _Loaded(standard, chain, sources)
    return standard


@dataclass(frozen=True)
class _Loaded:
    """A standard as read, and the bytes of its chain's ``standard.yaml`` files it was read
    from (read again after reading it: a file changing while read is a new read's next time)."""

    standard: Standard
    chain: tuple[Path, ...]
    sources: tuple[bytes | None, ...]


#: The standards read in this process, by directory: a handful (the carried ones, a test's).
_LOADED: dict[Path, _Loaded] = {}
_MAX_LOADED = 32


def _chain_bytes(chain: tuple[Path, ...]) -> tuple[bytes | None, ...]:
    """Each file's bytes, None for one that cannot be read (never kept, so never matched)."""
    found: list[bytes | None] = []
    for path in chain:
        try:
            found.append(path.read_bytes())
        except OSError:
            found.append(None)
    return tuple(found)


#: The top-level keys of ``standard.yaml``: required, then optional.
_REQUIRED_KEYS = ("version", "torch_release", "released", "tolerances", "numerics", "timeouts",
                  "skip_policy", "required", "grades")
_OPTIONAL_KEYS = (EXTENDS, "tiers", "test_lists", "report_format")
_GRADE_KEYS = ("name", "mark", "min_pass_rate", "all_required_passed", "max_policy_violations",
               "max_skipped_share", "certified_torch_release", "exit_code", "real_clock")


def _build(source: StandardSource, directory: Path) -> Standard:
    fields = source.node.section(_REQUIRED_KEYS, _OPTIONAL_KEYS, what="a standard")
    skip_policy = fields["skip_policy"].section(("never_skip", "reasons", "max_skip_days"))
    return Standard(
        version=fields["version"].text(),
        torch_release=fields["torch_release"].text(expected="a quoted release such as \"2.13.0\""),
        released=fields["released"].date(),
        directory=directory,
        tolerances={dtype: read_tolerance(node) for dtype, node in fields["tolerances"].entries()},
        numerics=read_numerics(fields["numerics"]),
        timeouts={tier: node.number(minimum=0, what="a number of seconds")
                  for tier, node in fields["timeouts"].entries()},
        tier_files=_file_names(fields.get("tiers")),
        test_lists=_file_names(fields.get("test_lists")),
        never_skip=skip_policy["never_skip"].strings(),
        skip_reasons=skip_policy["reasons"].strings(),
        max_skip_days=skip_policy["max_skip_days"].integer(
            minimum=1, what="a whole number of days"
        ),
        required={tier: node.strings() for tier, node in fields["required"].entries()},
        grades=_grades(fields["grades"]),
        inherited=tuple(member.directory for member in source.members[1:]),
        training=read_training_budget(fields["numerics"]),
        report_format=_report_format(fields.get("report_format")),
    )


def _report_format(node: Node | None) -> str:
    return REPORT_JSON_FORMAT if node is None else node.choice(REPORT_FORMATS)


def _file_names(node: Node | None) -> dict[str, str]:
    """Per tier, its file's path relative to a standard directory (``tiers``, ``test_lists``)."""
    return {} if node is None else {tier: file.text() for tier, file in node.entries()}


def _grades(node: Node) -> tuple[Grade, ...]:
    grades: list[Grade] = []
    for item in node.items(non_empty=True, what="a list of grades"):
        grade = _grade(item)
        taken = next((g for g in grades if g.exit_code == grade.exit_code), None)
        if taken is not None:
            raise _named(item).child("exit_code", grade.exit_code).error(
                f"{grade.exit_code} is already the exit_code of grade {taken.name!r}; each grade "
                "needs its own"
            )
        grades.append(grade)
    return tuple(grades)


def _grade(item: Node) -> Grade:
    fields = _named(item).section(_GRADE_KEYS, what="a grade (a mapping)")
    return Grade(
        name=fields["name"].text(),
        mark=fields["mark"].text(),
        min_pass_rate=fields["min_pass_rate"].number(minimum=0, maximum=1),
        all_required_passed=fields["all_required_passed"].flag(),
        max_policy_violations=fields["max_policy_violations"].integer(
            minimum=-1, what="a whole number (-1: unlimited)"
        ),
        max_skipped_share=fields["max_skipped_share"].number(minimum=0, maximum=1),
        certified_torch_release=fields["certified_torch_release"].flag(),
        exit_code=_grade_exit_code(fields["exit_code"]),
        real_clock=fields["real_clock"].flag(),
    )


def _named(item: Node) -> Node:
    """A grade's node labelled with its name, so messages say which grade (``grades.1
    (conformant).real_clock``)."""
    name = item.value.get("name") if isinstance(item.value, dict) else None
    return item.labelled(name) if isinstance(name, str) and name else item


def _grade_exit_code(node: Node) -> int:
    from kit.errors import ExitCode

    code = node.integer(minimum=0, maximum=125, what="an exit code")
    reserved = sorted(int(c) for c in ExitCode if c not in (ExitCode.OK, ExitCode.NOT_CONFORMANT))
    if code in reserved:
        raise node.error(
            f"exit code {code} is one of the kit's own codes {reserved}; a grade needs another"
        )
    return code
