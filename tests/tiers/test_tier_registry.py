"""The registry is the one list of tiers: the standard and the report schema agree with it, and a
tier registered at run time is planned, judged, summarized and locked without editing any other
module."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kit_homes import kit_home_with

from kit.cli import main
from kit.errors import InputError
from kit.execution import save_evidence
from kit.judge_context import JudgeContext
from kit.outcomes import Inapplicable, ResultMismatch
from kit.report.schema import schema_path
from kit.report.summary import summarize
from kit.results import NotApplicableReason, Status, TestRecord
from kit.runner.judge import judge_record, judged_apart
from kit.runner.plan import make_plan
from kit.standard import Standard, load_standard
from kit.standard.catalogue import carried_versions
from kit.tiers.interface import Tier
from kit.tiers.registry import (
    complete_run_tiers,
    get_tier,
    kit_inapplicable,
    register_tier,
    tier_names,
    unregister_tier,
)
from kit.vendors import VendorProfile, load_vendor

#: The cpu vendor of the checkout (the tests' kit home holds standards only).
CPU_PROFILE = Path(__file__).resolve().parents[2] / "vendors" / "cpu" / "vendor.yaml"
EXTRA = "smoke"
EXTRA_IDS = [f"{EXTRA}/answer", f"{EXTRA}/question"]


class SmokeTier(Tier):
    """A tier of two tests: ``answer`` applies, ``question`` never does; evidence ``42`` passes."""

    name = EXTRA
    in_complete_run = False

    def generate_ids(self, standard: Standard) -> list[str]:
        return list(EXTRA_IDS)

    def inapplicable(
        self, standard: Standard, vendor: VendorProfile, test_id: str
    ) -> Inapplicable | None:
        if test_id.endswith("/question"):
            return Inapplicable(NotApplicableReason.UNCLAIMED_DTYPE, "no question applies")
        return None

    def judge(self, context: JudgeContext, test_id: str, evidence: Any) -> dict[str, Any]:
        if evidence != 42:
            raise ResultMismatch(f"expected 42, got {evidence!r}")
        return {"answer": evidence}


@pytest.fixture
def smoke_tier() -> Iterator[Tier]:
    tier = SmokeTier()
    register_tier(tier)
    try:
        yield tier
    finally:
        unregister_tier(EXTRA)


@pytest.fixture
def kit_home_with_smoke_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A kit home whose current standard carries the extra tier's entries (list, timeout); a
    standard that extends another merges them over its parent's."""
    def add_entries(data: dict[str, Any]) -> None:
        data.setdefault("test_lists", {})[EXTRA] = f"tests/{EXTRA}.txt"
        data.setdefault("timeouts", {})[EXTRA] = 5

    current = kit_home_with(tmp_path / "home", add_entries)
    monkeypatch.setenv("CKIT_HOME", str(tmp_path / "home"))
    return current


def test_the_standard_names_exactly_the_registered_tiers() -> None:
    standard = load_standard()
    assert tuple(standard.test_lists) == tier_names()
    assert set(standard.timeouts) == set(tier_names())
    assert set(standard.required) <= set(tier_names())
    assert set(standard.tier_files) <= set(tier_names())


def test_the_report_schema_enumerates_the_registered_tiers_and_the_statuses() -> None:
    definitions = json.loads(schema_path().read_text(encoding="utf-8"))["$defs"]
    assert definitions["tier"]["enum"] == list(tier_names())
    assert definitions["status"]["enum"] == [status.value for status in Status]


@pytest.mark.parametrize("version", carried_versions())
def test_each_standard_counts_the_statuses_it_declares_and_records_the_rest_as_before(
    version: str,
) -> None:
    standard = load_standard(version)
    definitions = json.loads(schema_path(version).read_text(encoding="utf-8"))["$defs"]
    declared = [status.value for status in standard.statuses]
    assert definitions["status"]["enum"] == declared
    assert definitions["counts"]["properties"]["statuses"]["required"] == declared
    recorded = {standard.record_status(status) for status in Status}
    assert recorded == set(standard.statuses)


def test_v1_predates_fail_semantic_and_records_it_as_fail_numeric() -> None:
    v1, v2 = load_standard("v1"), load_standard("v2")
    assert Status.FAIL_SEMANTIC not in v1.statuses
    assert v1.record_status(Status.FAIL_SEMANTIC) is Status.FAIL_NUMERIC
    assert v2.record_status(Status.FAIL_SEMANTIC) is Status.FAIL_SEMANTIC


def test_every_tier_has_its_suite_and_deploy_alone_runs_without_a_device() -> None:
    for name in tier_names():
        assert any(get_tier(name).suite_dir.glob("test_*.py")), name
    assert [n for n in tier_names() if not get_tier(n).needs_device] == ["deploy"]
    assert "deploy" not in complete_run_tiers()


def test_an_unknown_tier_is_one_line_naming_the_tiers() -> None:
    with pytest.raises(InputError, match=r"unknown tier 'nope' \(tiers: deploy, unit"):
        get_tier("nope")


def test_a_taken_name_or_a_built_in_tier_is_refused(smoke_tier: Tier) -> None:
    with pytest.raises(InputError, match="already registered"):
        register_tier(SmokeTier())
    with pytest.raises(InputError, match="built in"):
        unregister_tier("unit")


def test_an_extra_tier_is_planned_decided_judged_and_summarized(
    smoke_tier: Tier, kit_home_with_smoke_entries: Path, tmp_path: Path
) -> None:
    assert tier_names()[-1] == EXTRA
    assert main(["standard", "lock", "--tier", EXTRA]) == 0
    standard = load_standard()
    assert standard.test_ids(EXTRA) == EXTRA_IDS
    assert make_plan(standard, (EXTRA,), ()).tests == tuple(EXTRA_IDS)

    vendor = load_vendor(str(CPU_PROFILE))
    assert kit_inapplicable(standard, vendor, EXTRA_IDS[0]) is None
    decided = kit_inapplicable(standard, vendor, EXTRA_IDS[1])
    assert decided is not None and decided.words == "no question applies"

    assert judged_apart(EXTRA_IDS[0])
    evidence = tmp_path / "evidence.bin"
    save_evidence(evidence, 42)
    passed = judge_record(JudgeContext(standard), EXTRA_IDS[0], evidence, 0.1)
    assert (passed.status, passed.details) == (Status.PASS, {"answer": 42})
    save_evidence(evidence, 41)
    assert judge_record(JudgeContext(standard), EXTRA_IDS[0], evidence, 0.1).status is (
        Status.FAIL_SEMANTIC
    )

    records = [TestRecord(EXTRA_IDS[0], Status.PASS, 0.1), TestRecord("unit/x/y/float32/0",
                                                                       Status.PASS, 0.1)]
    assert list(summarize(records, [], (), standard.statuses).tiers) == ["unit", EXTRA]


def test_a_standard_older_than_a_tier_runs_and_counts_only_the_tiers_it_carries() -> None:
    v1, current = load_standard("v1"), load_standard()
    newer = [name for name in complete_run_tiers() if not v1.carries(name)]
    assert newer, "the current standard carries a tier v1 predates (compile, distributed)"
    assert complete_run_tiers(v1) == tuple(n for n in complete_run_tiers() if n not in newer)
    assert complete_run_tiers(current) == complete_run_tiers()
