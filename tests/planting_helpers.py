"""Faults planted into one shared run: test modules register at import what they plant and
which tests show it, and a session fixture makes the one run (a run's start-up is most of its
cost). Used by ``tests/tiers/unit`` (``unit_helpers.plant``, ``plant_apart``) and ``tests/runner``
(``runner_helpers.plant_simnpu_faults``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kit.patterns import select_ids


@dataclass(frozen=True)
class Planted:
    """One module's simnpu faults and the tests (ids or patterns) that show what they do."""

    faults: tuple[dict[str, Any], ...]
    tests: tuple[str, ...]


class PlantedRun:
    """What the modules planted into one shared run. A module may join only with faults that
    fire on ops, dtypes or inputs the others' tests do not use (a float32 rule also fires on a
    float32 operand of a mixed-dtype call). Run alone, a module's tests see only its own."""

    def __init__(self) -> None:
        self.planted: list[Planted] = []

    def plant(self, faults: list[dict[str, Any]], tests: list[str]) -> None:
        self.planted.append(Planted(tuple(faults), tuple(tests)))

    def faults(self) -> list[dict[str, Any]]:
        """Every module's faults: the run's ``SIMNPU_FAULTS``."""
        return [fault for planted in self.planted for fault in planted.faults]

    def tests(self) -> list[str]:
        """Every module's tests, each once, in the order registered."""
        return list(dict.fromkeys(t for planted in self.planted for t in planted.tests))


def matching(records: dict[str, dict[str, Any]], selects: list[str]) -> dict[str, dict[str, Any]]:
    """The records of a shared run that ``selects`` picks."""
    chosen = set(select_ids(list(records), tuple(selects)))
    return {test_id: record for test_id, record in records.items() if test_id in chosen}
