"""Which error-parity tests of a standard try an input OpInfo gives for CPU alone: decided at
lock time (``locked_ids.CPU_ONLY_ERRORS``), NOT_APPLICABLE on any other device at run time."""

from __future__ import annotations

from kit.tiers.unit.config import UnitConfig
from kit.tiers.unit.samples import find_opinfo
from kit.tiers.unit.unit_id import UnitId
from kit.tiers.unit.variants.errors import Errors, cpu_only_positions


def cpu_only_error_ids(config: UnitConfig, test_ids: list[str]) -> list[str]:
    """The OpInfo error-parity tests among ``test_ids`` whose input OpInfo gives for CPU
    alone (``kit.tiers.unit.variants.errors.cpu_only_positions``)."""
    found = []
    for test_id in test_ids:
        unit = UnitId.read(test_id)
        rule, position = unit.variant() if unit else ("", "")
        if unit is None or unit.source != "opinfo" or rule != Errors.name:
            continue
        if int(position) in cpu_only_positions(find_opinfo(config.op(unit.op))):
            found.append(test_id)
    return found
