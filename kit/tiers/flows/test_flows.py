"""The flows tier suite: one test per locked id ``flows/<flow>/<unit id without "unit/">``.

Collection reads only the locked list, so it imports no backend (executorch, onnxruntime).
"""

from __future__ import annotations

import pytest

from kit.context import KitContext
from kit.standard import load_standard
from kit.tiers.flows.cases import run_flow_case

FLOW_TEST_IDS = load_standard().test_ids("flows")


@pytest.mark.parametrize("case", FLOW_TEST_IDS, ids=FLOW_TEST_IDS)
def test_flow(case: str, ckit: KitContext) -> None:
    run_flow_case(ckit, case)
