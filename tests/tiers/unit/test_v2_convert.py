"""Standard v2's conversions: x.half(), x.long(), x.bool() ... given ties, overflow, subnormals,
fractions and integers past a float's precision. A truncating float32 to bfloat16 conversion
is caught on a real device (simnpu) while a conversion it leaves alone passes; the cpu and
fault-free simnpu vendors pass every conversion; every CPU path gives the same answers."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import torch
from planting_helpers import matching
from unit_helpers import UnitRun, on_clean_cpu, plant, plant_apart

from kit.errors import InputError
from kit.standard import load_standard
from kit.tiers.unit.cases import unit_case
from kit.tiers.unit.config import parse_unit_config
from kit.tiers.unit.variants.convert import TARGETS
from kit.tiers.unit.variants.convert_values import next_magnitude

pytestmark = pytest.mark.slow(seconds=60)

STANDARD = load_standard()
LOCKED = set(STANDARD.test_ids("unit"))
CONVERSIONS = [i for i in LOCKED if i.split("/")[2] in TARGETS]
HAS_SIMNPU = importlib.util.find_spec("simnpu") is not None


def _input(test_id: str) -> torch.Tensor:
    (values,), _ = unit_case(STANDARD, test_id).make_inputs("cpu", False)
    return values


def test_conversion_ops_run_only_their_convert_samples_one_or_two_a_pair() -> None:
    assert CONVERSIONS and all("/convert-" in i for i in CONVERSIONS)
    per_pair = Counter(i.rsplit("/", 1)[0] for i in CONVERSIONS)
    assert len(per_pair) == 7 * 6  # every ordered pair of distinct dtypes
    assert set(per_pair.values()) <= {1, 2}
    assert len(CONVERSIONS) <= 150


def _coverage(variants_only: dict[str, Any]) -> dict[str, Any]:
    return {
        "coverage": {"variants_only": variants_only,
                     "variants": {"empty": {"ops": ["all_ops"]}, "convert": {"ops": ["half"]}}},
        "ops": [{"op": "add", "dtypes": ["float32"]}, {"op": "half", "dtypes": ["float32"]}],
    }


def test_variants_only_ops_run_no_samples_and_no_all_ops_variant() -> None:
    coverage = parse_unit_config(_coverage({"ops": ["half"], "why": "w"}), Path("u.yaml")).coverage
    assert coverage.samples_cap("half") == 0 and coverage.samples_cap("add") is None
    assert [r.name for r in coverage.variants_of("half", "float32")] == ["convert"]
    assert [r.name for r in coverage.variants_of("add", "float32")] == ["empty"]
    with pytest.raises(InputError, match=r"^u.yaml: coverage.variants_only.why: required"):
        parse_unit_config(_coverage({"ops": ["half"]}), Path("u.yaml"))


def test_ties_round_to_nearest_even_both_ways() -> None:
    values = _input("unit/opinfo/bfloat16/float32/convert-ties")
    rounded = values.to(torch.bfloat16)
    lower = torch.where(rounded.abs().float() > values.abs(),
                        (rounded.view(torch.int16) - 1).view(torch.bfloat16), rounded)
    ties = (values.double() * 2 == lower.double() + next_magnitude(lower).double())
    assert int(ties.sum()) >= 32
    up = ties & (rounded.abs().float() > values.abs())
    assert 0 < int(up.sum()) < int(ties.sum())  # nearest even goes either way
    even = (rounded.view(torch.int16) & 1) == 0
    assert bool(even[ties].all())


def test_float_to_integer_samples_truncate_within_range_only() -> None:
    for source in ("float32", "float64"):
        values = _input(f"unit/opinfo/int/{source}/convert-truncate").double()
        assert bool(torch.isfinite(values).all())
        whole = values.trunc()
        assert bool(((whole >= -2**31) & (whole < 2**31)).all())
        assert float(whole.max()) >= 2**30 and bool((values != whole).any())


#: Digests the conversions of every conversion sample (NaN payloads set aside: the judge does
#: not compare them, and CPU paths give different ones).
_DIGEST = """
import hashlib, sys, torch
from kit.errors import InputError
from kit.standard import load_standard
from kit.tiers.unit.cases import unit_case
from kit.tiers.unit.config import parse_unit_config
standard = load_standard()
digest = hashlib.sha256()
for test_id in sys.argv[1:]:
    case = unit_case(standard, test_id)
    inputs = case.make_inputs("cpu", False)
    result = case.call("cpu", False, inputs)
    if result.is_floating_point():
        result = torch.where(result.isnan(), torch.zeros((), dtype=result.dtype), result)
    digest.update(repr(result.tolist()).encode())
print(torch.backends.cpu.get_cpu_capability(), digest.hexdigest())
"""


@pytest.mark.heavy  # three interpreters regenerate every conversion: CI's heavy run keeps it
def test_every_cpu_path_converts_the_samples_alike() -> None:
    ids = sorted(CONVERSIONS)
    digests = {}
    for capability in ("default", "avx2", "avx512"):
        env = {**os.environ, "ATEN_CPU_CAPABILITY": capability}
        done = subprocess.run([sys.executable, "-c", _DIGEST, *ids], env=env,
                              capture_output=True, text=True, timeout=300, check=True)
        used, digest = done.stdout.split()
        digests[used] = digest
    assert len(digests) >= 2, digests  # this CPU has at least AVX2
    assert len(set(digests.values())) == 1, digests


CONVERT = on_clean_cpu(["unit/opinfo/*/*/convert-*"])


def _all_pass(records: dict[str, dict[str, Any]]) -> None:
    assert set(records) == set(CONVERSIONS)
    failing = [(i, r["message"]) for i, r in records.items() if r["status"] != "PASS"]
    assert not failing, failing[:5]


@pytest.mark.slow(seconds=60)
def test_every_conversion_passes_on_the_cpu_vendor(
    clean_cpu_run: dict[str, dict[str, Any]],
) -> None:
    _all_pass(matching(clean_cpu_run, CONVERT))


#: In the second shared planted run, whose faults no conversion meets (the first plants
#: ``truncate`` below).
plant_apart([], CONVERT)


@pytest.mark.skipif(not HAS_SIMNPU, reason="simnpu not installed")
def test_every_conversion_passes_on_fault_free_simnpu(planted_apart_run: UnitRun) -> None:
    _all_pass(matching(planted_apart_run.records, CONVERT))


CAUGHT = ["unit/opinfo/bfloat16/float32/convert-ties", "unit/opinfo/half/float64/convert-range"]
SIBLINGS = ["unit/opinfo/double/float32/convert-exact",
            "unit/opinfo/long/float32/convert-truncate"]
plant([{"op": "_to_copy", "kind": "truncate"}], CAUGHT + SIBLINGS)


@pytest.mark.skipif(not HAS_SIMNPU, reason="simnpu not installed")
def test_a_truncating_narrowing_conversion_is_caught(
    planted_run: dict[str, dict[str, Any]],
) -> None:
    records = planted_run
    for test_id in CAUGHT:
        assert records[test_id]["status"] == "FAIL_NUMERIC", records[test_id]["message"]
    for test_id in SIBLINGS:
        assert records[test_id]["status"] == "PASS", records[test_id]["message"]
