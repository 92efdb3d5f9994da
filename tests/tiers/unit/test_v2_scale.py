"""Standard v2's ``scale`` variant: inputs past 2^16 and 2^24 elements; a test over the memory
budget is NOT_APPLICABLE, decided by the kit."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

import pytest
from unit_helpers import plant

from kit import paths
from kit.cli.standard_lock import locked_digests
from kit.results import NotApplicableReason
from kit.standard import load_standard
from kit.tiers.unit.cases import unit_case
from kit.tiers.unit.config import load_unit_config
from kit.tiers.unit.identity import case_digest
from kit.tiers.unit.opinfo_cases import parse_opinfo_id, selected_positions
from kit.tiers.unit.samples import opinfo_samples
from kit.tiers.unit.scale_budget import footprint_bytes, scale_elements
from kit.tiers.unit.tier import UnitTier
from kit.tiers.unit.variants import variant_samples
from kit.tiers.unit.variants.interface import VariantSource, rule_of_segment
from kit.tiers.unit.variants.registry import kind_named
from kit.vendors import VendorProfile, load_vendor

STANDARD = load_standard()
LOCKED = set(STANDARD.test_ids("unit"))
SUM_24 = "unit/opinfo/sum/float32/scale-2p24"


def _vendor_with_memory(tmp_path: Path, mib: int | None) -> VendorProfile:
    directory = tmp_path / "small"
    shutil.copytree(paths.vendors_dir() / "cpu", directory)
    profile = directory / "vendor.yaml"
    text = profile.read_text().replace("id: cpu", "id: small")
    if mib is not None:
        text += f"device_memory_mib: {mib}\n"
    profile.write_text(text)
    return load_vendor(directory)


def test_scale_ids_go_past_two_to_the_16_and_24() -> None:
    for op in ("sum", "argmax", "cumsum", "softmax", "add", "index_select", "scatter_add"):
        for power in (16, 24):
            assert f"unit/opinfo/{op}/float32/scale-2p{power}" in LOCKED
    assert scale_elements(24) > 1 << 24


def test_a_scale_test_over_the_vendors_device_memory_is_not_applicable(tmp_path: Path) -> None:
    needed_mib = footprint_bytes("float32", 24) >> 20
    small = _vendor_with_memory(tmp_path, needed_mib - 1)
    found = UnitTier().inapplicable(STANDARD, small, SUM_24)
    assert found is not None and found.reason is NotApplicableReason.EXCEEDS_MEMORY_BUDGET
    assert UnitTier().inapplicable(
        STANDARD, small, "unit/opinfo/sum/float32/scale-2p16") is None
    roomy = _vendor_with_memory(tmp_path / "roomy", None)
    assert UnitTier().inapplicable(STANDARD, roomy, SUM_24) is None


SUM_16 = "unit/opinfo/sum/float32/scale-2p16"
plant([{"op": "sum", "kind": "drop_past"}], [SUM_24, SUM_16])


@pytest.mark.slow(seconds=90)
@pytest.mark.skipif(importlib.util.find_spec("simnpu") is None, reason="simnpu not installed")
def test_a_reduction_dropping_elements_past_two_to_the_24_is_caught_on_simnpu(
    planted_run: dict[str, dict[str, Any]],
) -> None:
    """sum treating what lies past 2^24 as zero: the 2^24 test fails on values, the 2^16
    sibling passes."""
    records = planted_run
    assert records[SUM_24]["status"] == "FAIL_NUMERIC", records[SUM_24]["message"]
    assert records[SUM_16]["status"] == "PASS", records[SUM_16]["message"]


def test_a_run_builds_the_one_input_an_id_names_as_the_lock_built_it() -> None:
    """A run builds a scale id's input by its name, without CPU's check (``sample_named``):
    it must be the input ``build`` made with the check, and the one the lock digested (the
    2^16 ids; the 2^24 ones are the heavy ``lock --check``'s). A process that built the
    samples (the lock's) reuses them: ``unit_case`` there names the same input."""
    config = load_unit_config(STANDARD)
    locked = locked_digests(STANDARD.test_list_path("unit"))
    small = sorted(test_id for test_id in LOCKED if test_id.endswith("/scale-2p16"))
    assert len(small) >= 10
    for test_id in small:
        parsed = parse_opinfo_id(test_id)
        entry = config.op(parsed.op_key)
        rule = rule_of_segment(str(parsed.sample), config.coverage.variants_of(entry.key,
                                                                                parsed.dtype))
        assert rule is not None
        tested = selected_positions(config, entry, parsed.dtype)
        kind = kind_named(rule.kind)
        source = VariantSource(entry, parsed.dtype, rule, opinfo_samples(entry, parsed.dtype),
                               tested)
        by_name = kind.case(entry, parsed.dtype, kind.sample_named(source, str(parsed.sample)),
                            test_id)
        built = variant_samples(entry, parsed.dtype, rule, tested)[str(parsed.sample)]
        checked = kind.case(entry, parsed.dtype, built, test_id)
        reused = case_digest(unit_case(STANDARD, test_id))
        assert case_digest(by_name) == case_digest(checked) == reused == locked[test_id], test_id


def test_a_segment_the_scale_rule_does_not_name_builds_nothing() -> None:
    config = load_unit_config(STANDARD)
    scale_rule = next(r for r in config.coverage.variants if r.kind == "scale")
    source = VariantSource(config.op("sum"), "float32", scale_rule, (), ())
    for not_named in ("scale-2p17", "scale-2p", "scale-2pxx", "large", "scale-2p31", "2p16"):
        assert kind_named("scale").sample_named(source, not_named) is None, not_named
