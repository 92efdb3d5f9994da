"""The versioned standard: tolerances, skip policy, required tests and grade thresholds.

A standard may extend another and carry only what changes (``kit.standard.inheritance`` has the
rules); every file it names is found through ``Standard.file``. Which standards the kit carries,
and which one a run uses, is ``kit.standard.catalogue``'s.
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit.errors import InputError
from kit.numerics.criteria import Tolerance
from kit.numerics.model import NumericsRules
from kit.numerics.parsing import parse_numerics
from kit.patterns import matches_any
from kit.standard.catalogue import current_version, standard_directory, torch_release_of
from kit.standard.inheritance import STANDARD_FILE, StandardSource, read_standard_source
from kit.yamlio import load_yaml

__all__ = ["Grade", "Standard", "Tolerance", "current_torch_release", "load_standard",
           "torch_release_of"]


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

    def tolerance(self, dtype: str) -> Tolerance:
        try:
            return self.tolerances[dtype]
        except KeyError:
            raise InputError(f"standard {self.version}: no tolerance for dtype {dtype!r}") from None

    def tier_config(self, tier: str) -> Any:
        """The parsed tier file (e.g. ``unit.yaml``) of ``tier``."""
        return load_yaml(self.tier_file(tier))

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

    def is_required(self, test_id: str) -> bool:
        tier = test_id.split("/", 1)[0]
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


@functools.lru_cache(maxsize=8)
def _locked_ids(text: str) -> tuple[str, ...]:
    """The ids of a locked list's text, parsed once: regrading reads the lists for every report."""
    lines = text.splitlines()
    return tuple(line.split(" ", 1)[0] for line in lines if line and not line.startswith("#"))


def current_torch_release() -> str:
    """The PyTorch release the kit's current standard certifies (what installs pin)."""
    return load_standard().torch_release


def load_standard(version: str | None = None, directory: Path | None = None) -> Standard:
    """The standard in ``directory``, else the carried standard ``version``, else the kit's
    current standard (``kit.standard.catalogue``), merged with the standards it extends."""
    directory = directory or standard_directory(version or current_version())
    source = read_standard_source(directory)
    standard = _build(source, directory)
    # After the fields: a malformed field is named before a misnamed directory.
    source.check_versions()
    return standard


def _build(source: StandardSource, directory: Path) -> Standard:
    data = source.data
    path = directory / STANDARD_FILE
    try:
        skip_policy = data["skip_policy"]
        return Standard(
            version=str(data["version"]),
            torch_release=str(data["torch_release"]),
            released=_date(data, "released"),
            directory=directory,
            tolerances={
                dtype: Tolerance(float(t["atol"]), float(t["rtol"]))
                for dtype, t in data["tolerances"].items()
            },
            numerics=parse_numerics(data.get("numerics"), f"{path}: numerics"),
            timeouts={tier: float(s) for tier, s in data["timeouts"].items()},
            tier_files=dict(data.get("tiers", {})),
            test_lists=dict(data.get("test_lists", {})),
            never_skip=tuple(skip_policy["never_skip"]),
            skip_reasons=tuple(skip_policy["reasons"]),
            max_skip_days=_count(skip_policy, "max_skip_days"),
            required={tier: tuple(p) for tier, p in data["required"].items()},
            grades=_grades(data["grades"]),
            inherited=tuple(member.directory for member in source.members[1:]),
        )
    except KeyError as exc:
        raise InputError(f"{path}: malformed standard: missing field {exc}") from None
    except (TypeError, ValueError) as exc:
        raise InputError(f"{path}: malformed standard: {exc}") from None


def _grades(raw: list[dict[str, Any]]) -> tuple[Grade, ...]:
    grades = tuple(_grade(g) for g in raw)
    codes = [g.exit_code for g in grades]
    if len(set(codes)) != len(codes):
        raise InputError(f"grades: each grade needs its own exit_code, got {codes}")
    return grades


def _grade(data: dict[str, Any]) -> Grade:
    return Grade(
        name=str(data["name"]),
        mark=str(data["mark"]),
        min_pass_rate=float(data["min_pass_rate"]),
        all_required_passed=_flag(data, "all_required_passed"),
        max_policy_violations=int(data["max_policy_violations"]),
        max_skipped_share=_share(data, "max_skipped_share"),
        certified_torch_release=_flag(data, "certified_torch_release"),
        exit_code=_grade_exit_code(data),
        real_clock=_flag(data, "real_clock"),
    )


def _grade_exit_code(data: dict[str, Any]) -> int:
    from kit.errors import ExitCode

    code = data.get("exit_code")
    reserved = {int(c) for c in ExitCode if c not in (ExitCode.OK, ExitCode.NOT_CONFORMANT)}
    if isinstance(code, bool) or not isinstance(code, int) or not 0 <= code < 126:
        code = -1
    if code < 0 or code in reserved:
        raise InputError(
            f"grade {data.get('name')!r}: exit_code must be 0-125 and not one of the kit's own "
            f"codes {sorted(reserved)}"
        )
    return code


def _flag(data: dict[str, Any], key: str) -> bool:
    # bool("false") is True: a quoted flag must not silently turn a condition on or off.
    value = data[key]
    if not isinstance(value, bool):
        raise ValueError(f"grade {data.get('name')!r}: {key} must be true or false, got {value!r}")
    return value


def _date(data: dict[str, Any], key: str) -> dt.date:
    # An unquoted YYYY-MM-DD is a date to YAML; a quoted one or a datetime is a mistake.
    value = data[key]
    if not isinstance(value, dt.date) or isinstance(value, dt.datetime):
        raise ValueError(f"{key} must be a date YYYY-MM-DD, got {value!r}")
    return value


def _count(data: dict[str, Any], key: str) -> int:
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"skip_policy.{key} must be a number of days, at least 1, got {value!r}")
    return value


def _share(data: dict[str, Any], key: str) -> float:
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError(
            f"grade {data.get('name')!r}: {key} must be a number from 0 to 1, got {value!r}"
        )
    return float(value)
