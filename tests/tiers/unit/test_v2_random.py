"""Standard v2: a sample that draws random numbers (SDPA with dropout_p = 0.5) is never compared
by value with CPU: NOT_APPLICABLE (``draws-random-numbers``) once its structure, dtypes and
shapes hold; v1, which has no ``coverage.random``, judges it as it always did."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from kit.outcomes import NumericMismatch, ResultMismatch, ValuesNotCompared
from kit.results import NotApplicableReason
from kit.standard import load_standard
from kit.tiers.unit.cases import unit_case
from kit.tiers.unit.checking import cpu_references, execute_case, judge_case
from kit.tiers.unit.config import load_unit_config

STANDARD = load_standard("v2")
SDPA = "unit/opinfo/nn.functional.scaled_dot_product_attention/float32/"
DROPOUT = f"{SDPA}2"  # dropout_p = 0.5
PLAIN = f"{SDPA}0"  # dropout_p = 0.0: compared as usual


def _other_draws(evidence: tuple[object, ...]) -> tuple[object, ...]:
    """The evidence of a device whose generator drew otherwise: same shape, other values."""
    result = evidence[0]
    assert isinstance(result, torch.Tensor)
    return (result.flip(-1) * 2 + 1, *evidence[1:])


def test_only_the_samples_that_draw_are_told_random() -> None:
    assert cpu_references(unit_case(STANDARD, DROPOUT), watch_random=True).drew_random
    assert not cpu_references(unit_case(STANDARD, PLAIN), watch_random=True).drew_random
    assert not cpu_references(unit_case(STANDARD, DROPOUT)).drew_random  # unwatched: v1
    assert load_unit_config(STANDARD).coverage.random_not_compared
    assert not load_unit_config(load_standard("v1")).coverage.random_not_compared


def test_other_draws_are_not_applicable_but_a_wrong_shape_still_fails() -> None:
    case = unit_case(STANDARD, DROPOUT)
    evidence = _other_draws(execute_case("cpu", case))
    with pytest.raises(ValuesNotCompared) as decided:
        judge_case(STANDARD, case, evidence, random_not_compared=True)
    assert decided.value.details()["na_reason"] == NotApplicableReason.DRAWS_RANDOM_NUMBERS
    with pytest.raises(NumericMismatch):  # v1's judging: the draws compared by value
        judge_case(STANDARD, case, evidence, random_not_compared=False)
    reshaped = (torch.as_tensor(evidence[0]).unsqueeze(0), *evidence[1:])
    with pytest.raises(ResultMismatch) as wrong:
        judge_case(STANDARD, case, reshaped, random_not_compared=True)
    assert wrong.value.details()["failure"] == "wrong-shape"


@pytest.mark.slow(seconds=35)
def test_a_run_records_them_not_applicable_and_accounted(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "kit", "run", "--vendor", "cpu", "--tier", "unit",
         "--select", DROPOUT, "--select", PLAIN, "--no-sign", "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    report = json.loads((out / "report.json").read_text())
    records = {r["id"]: r for r in report["records"]}
    assert records[PLAIN]["status"] == "PASS", records[PLAIN]["message"]
    dropped = records[DROPOUT]
    assert dropped["status"] == "NOT_APPLICABLE", (dropped["message"], done.stderr[-2000:])
    assert dropped["details"]["na_reason"] == "draws-random-numbers"
    assert report["unaccounted"] == []
