"""The versioned standard: tolerances, skip policy, required tests and grade thresholds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kit
from kit import paths
from kit.errors import InputError
from kit.patterns import matches_any
from kit.yamlio import load_yaml


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float


@dataclass(frozen=True)
class Grade:
    name: str
    min_pass_rate: float
    all_required_passed: bool
    #: -1 means unlimited.
    max_policy_violations: int


@dataclass(frozen=True)
class Standard:
    version: str
    torch_release: str
    directory: Path
    tolerances: dict[str, Tolerance]
    timeouts: dict[str, float]
    tier_files: dict[str, str]
    test_lists: dict[str, str]
    never_skip: tuple[str, ...]
    skip_reasons: tuple[str, ...]
    required: dict[str, tuple[str, ...]]
    grades: tuple[Grade, ...]

    def tolerance(self, dtype: str) -> Tolerance:
        try:
            return self.tolerances[dtype]
        except KeyError:
            raise InputError(f"standard {self.version}: no tolerance for dtype {dtype!r}") from None

    def tier_config(self, tier: str) -> Any:
        """The parsed tier file (e.g. ``unit.yaml``) of ``tier``."""
        return load_yaml(self.directory / self.tier_files[tier])

    def test_list_path(self, tier: str) -> Path:
        return self.directory / self.test_lists[tier]

    def test_ids(self, tier: str) -> list[str]:
        """The locked list of test ids of ``tier`` (empty if the tier has no list)."""
        if tier not in self.test_lists:
            return []
        path = self.test_list_path(tier)
        if not path.exists():
            raise InputError(f"{path}: missing; regenerate it with `ckit standard lock`")
        lines = path.read_text(encoding="utf-8").splitlines()
        return [line for line in lines if line and not line.startswith("#")]

    def is_required(self, test_id: str) -> bool:
        tier = test_id.split("/", 1)[0]
        return matches_any(test_id, self.required.get(tier, ()))

    def may_skip(self, test_id: str) -> bool:
        return not matches_any(test_id, self.never_skip)


def load_standard(version: str = kit.STANDARD_VERSION, directory: Path | None = None) -> Standard:
    directory = directory or paths.standard_dir(version)
    source = directory / "standard.yaml"
    data = load_yaml(source)
    try:
        return Standard(
            version=str(data["version"]),
            torch_release=str(data["torch_release"]),
            directory=directory,
            tolerances={
                dtype: Tolerance(float(t["atol"]), float(t["rtol"]))
                for dtype, t in data["tolerances"].items()
            },
            timeouts={tier: float(s) for tier, s in data["timeouts"].items()},
            tier_files=dict(data.get("tiers", {})),
            test_lists=dict(data.get("test_lists", {})),
            never_skip=tuple(data["skip_policy"]["never_skip"]),
            skip_reasons=tuple(data["skip_policy"]["reasons"]),
            required={tier: tuple(p) for tier, p in data["required"].items()},
            grades=tuple(
                Grade(
                    name=g["name"],
                    min_pass_rate=float(g["min_pass_rate"]),
                    all_required_passed=bool(g["all_required_passed"]),
                    max_policy_violations=int(g["max_policy_violations"]),
                )
                for g in data["grades"]
            ),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{source}: malformed standard: {exc!r}") from None
