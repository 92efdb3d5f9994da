"""Unit tier, YAML op spec half: one test per locked id ``unit/opspec/<template>/<dtype>/<case>``.

Parametrized from the standard's locked list, so collection stays fast and ids come from the
standard alone.
"""

from __future__ import annotations

import pytest

from kit.context import KitContext
from kit.standard import load_standard
from kit.tiers.unit.cases import OPSPEC_PREFIX, run_unit_case

IDS = [i for i in load_standard().test_ids("unit") if i.startswith(OPSPEC_PREFIX)]


@pytest.mark.parametrize("case", IDS, ids=IDS)
def test_opspecs(case: str, ckit: KitContext) -> None:
    run_unit_case(ckit, case)
