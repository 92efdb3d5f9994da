"""Unit tier, OpInfo half: one test per locked id ``unit/opinfo/<op>/<dtype>/<sample>``.

Parametrized from the standard's locked list, so collection stays fast (OpInfo's op_db is only
imported when the first test runs) and ids come from the standard alone.
"""

from __future__ import annotations

import pytest

from kit.context import KitContext
from kit.standard import load_standard
from kit.tiers.unit.cases import OPINFO_PREFIX, run_unit_case

IDS = [i for i in load_standard().test_ids("unit") if i.startswith(OPINFO_PREFIX)]


@pytest.mark.parametrize("case", IDS, ids=IDS)
def test_opinfo(case: str, ckit: KitContext) -> None:
    run_unit_case(ckit, case)
