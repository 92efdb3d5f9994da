"""The model tier suite: one test per locked model test id (``models/<source>/<model>/<flow>``).

Collection reads only the locked list, so it imports no model package (transformers, timm).
"""

from __future__ import annotations

import pytest

from kit.context import KitContext
from kit.standard import load_standard
from kit.tiers.models.cases import run_model_case

MODEL_TEST_IDS = load_standard().test_ids("models")


@pytest.mark.parametrize("case", MODEL_TEST_IDS, ids=MODEL_TEST_IDS)
def test_model(case: str, ckit: KitContext) -> None:
    run_model_case(ckit, case)
