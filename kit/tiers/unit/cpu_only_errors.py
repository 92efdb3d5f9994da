"""Which error-parity tests of a standard try an input OpInfo gives for CPU alone: decided at
lock time (``locked_ids.CPU_ONLY_ERRORS``), NOT_APPLICABLE on any other device at run time."""

from __future__ import annotations

from kit.tiers.unit.config import UnitConfig
from kit.tiers.unit.samples import find_opinfo
from kit.tiers.unit.unit_id import OPINFO_PREFIXES, UnitId
from kit.tiers.unit.variants.errors import Errors, cpu_only_positions


def error_parity_ids(test_ids: list[str]) -> list[str]:
    """The OpInfo error-parity tests (``error-<n>``) among ``test_ids``."""
    found = []
    for test_id in test_ids:
        unit = UnitId.read(test_id)
        if (unit is not None and test_id.startswith(OPINFO_PREFIXES)
                and unit.variant()[0] == Errors.name):
            found.append(test_id)
    return found


def cpu_only_error_ids(config: UnitConfig, test_ids: list[str]) -> list[str]:
    """The error-parity tests among ``test_ids`` (``error_parity_ids``) whose input OpInfo
    gives for CPU alone (``kit.tiers.unit.variants.errors.cpu_only_positions``)."""
    found = []
    for test_id in error_parity_ids(test_ids):
        unit = UnitId.of(test_id)
        entry = config.op(unit.op, unit.source)
        if int(unit.variant()[1]) in cpu_only_positions(find_opinfo(entry)):
            found.append(test_id)
    return found
