"""The unit tier: OpInfo samples and YAML op specs, each run on the vendor device.

``all_test_ids`` generates the tier's stable ids (``ckit standard lock`` writes them to the
standard's locked list); ``run_unit_case`` runs one of them. Collection never imports this
package's heavy parts: the tier suites read the locked list.
"""

from __future__ import annotations

from kit.context import KitContext
from kit.errors import InputError
from kit.standard import Standard
from kit.unit.config import load_unit_config

OPINFO_PREFIX = "unit/opinfo/"
OPSPEC_PREFIX = "unit/opspec/"


def all_test_ids(standard: Standard) -> list[str]:
    """Every unit test id of ``standard``, sorted (imports OpInfo's op_db: seconds)."""
    from kit.unit.opinfo_cases import opinfo_test_ids
    from kit.unit.opspecs import opspec_test_ids

    config = load_unit_config(standard)
    ids = opinfo_test_ids(config) + opspec_test_ids(config)
    return sorted(ids)


def run_unit_case(ckit: KitContext, test_id: str) -> None:
    """Run one unit test; raises what the plugin classifies (NumericMismatch, skips, ...)."""
    config = load_unit_config(ckit.standard)
    if test_id.startswith(OPINFO_PREFIX):
        from kit.unit.opinfo_cases import run_opinfo_case

        run_opinfo_case(ckit, config, test_id)
    elif test_id.startswith(OPSPEC_PREFIX):
        from kit.unit.opspecs import run_opspec_case

        run_opspec_case(ckit, config, test_id)
    else:
        raise InputError(f"not a unit test id: {test_id!r}")
