"""The locked flows list is what the tier generates."""

from __future__ import annotations

from kit.flows.config import flows_config
from kit.flows.interface import Stage
from kit.results import Status
from kit.standard import load_standard
from kit.tiers.flows.cases import all_test_ids, parse_flow_id


def test_locked_list_equals_generated_ids() -> None:
    standard = load_standard()
    assert standard.test_ids("flows") == all_test_ids(standard)


def test_every_locked_id_names_a_locked_float32_unit_test_and_a_listed_flow() -> None:
    standard = load_standard()
    units = set(standard.test_ids("unit"))
    pairs = [parse_flow_id(test_id) for test_id in standard.test_ids("flows")]
    strays = [(f, u) for f, u in pairs
              if u not in units or "/float32/" not in u or f not in flows_config(standard).flows]
    assert (strays, {f for f, _ in pairs}) == ([], set(flows_config(standard).flows))


def test_judged_stages_are_statuses_or_stage_failures() -> None:
    # Every judged stage either is a record status or ends as ERROR/UNSUPPORTED.
    statuses = {status.value for status in Status}
    judged = {stage.value for stage in Stage if stage is not Stage.RAN}
    assert {s for s in judged if s in statuses} == {"PASS", "FAIL_NUMERIC", "NOT_DELEGATED"}
