"""Samples made once (``kit.tiers.unit.taken_inputs``): the judge builds a case on the inputs
the device's evidence holds only where their digest is the one the standard locked, on its own
release; anything else is regenerated, and the verdict is always the one the standard's inputs
give."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
import torch
from unit_helpers import cpu_context

import kit.tiers.unit.taken_inputs as taken_inputs
from kit.judge_context import JudgeContext
from kit.standard import load_standard
from kit.tiers.unit.cases import execute_attributed, unit_case
from kit.tiers.unit.checking import judge_case
from kit.tiers.unit.config import load_unit_config
from kit.tiers.unit.evidence import UnitEvidence
from kit.tiers.unit.repeat import AGAIN
from kit.tiers.unit.tier import UnitTier

PLAIN = "unit/opinfo/ceil/float32/0"
VARIANT = "unit/opinfo/sum/float32/large"


def _executed(test_id: str) -> UnitEvidence:
    standard = load_standard()
    return execute_attributed(cpu_context(), unit_case(standard, test_id),
                              load_unit_config(standard).attribution)


def _verdict(test_id: str, evidence: UnitEvidence) -> tuple[str, Any]:
    """What the judge process decides (``UnitTier.judge``)."""
    try:
        return "PASS", UnitTier().judge(JudgeContext(load_standard()), test_id,
                                        evidence.to_tree())
    except Exception as exc:  # noqa: BLE001 - the verdict is the exception
        details = getattr(exc, "details", None)
        return type(exc).__name__, (str(exc), details() if callable(details) else details)


def _regenerated(test_id: str, evidence: UnitEvidence,
                 monkeypatch: pytest.MonkeyPatch) -> tuple[str, Any]:
    """The verdict with no inputs ever taken: every case rebuilt, as before samples were made
    once."""
    with monkeypatch.context() as patch:
        patch.setattr(taken_inputs, "taken_case", lambda *args: None)
        return _verdict(test_id, evidence)


def _taken(test_id: str, inputs: Any) -> bool:
    standard = load_standard()
    config = load_unit_config(standard)
    return taken_inputs.taken_case(standard, config, test_id, inputs) is not None


@pytest.mark.parametrize("test_id", [PLAIN, VARIANT])
def test_the_standards_inputs_are_taken_and_judged_as_regenerated(
        test_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    evidence = _executed(test_id)
    assert _taken(test_id, evidence.inputs)
    verdict = _verdict(test_id, evidence)
    assert verdict == _regenerated(test_id, evidence, monkeypatch)
    assert verdict[0] == "PASS"


def test_worker_sending_other_inputs_is_judged_on_the_standards_inputs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    honest = _executed(PLAIN)
    (_, *rest), named = honest.inputs
    # A wrong ceil, and inputs on which CPU's ceil gives it.
    wrong = torch.floor(honest.result) + 2.0
    forged = ((wrong.clone(), *rest), named)
    repeated = honest.repeated and {**honest.repeated, AGAIN: wrong.clone()}
    attack = replace(honest, result=wrong, inputs=forged, repeated=repeated)
    # Built on the forged inputs, the wrong ceil would pass...
    standard = load_standard()
    trusted = taken_inputs.case_on_inputs(load_unit_config(standard), PLAIN, forged)
    assert trusted is not None and judge_case(standard, trusted, replace(attack, repeated=None))
    # ...but their digest is not the standard's: the judge regenerates, and finds them written.
    assert not _taken(PLAIN, forged)
    verdict = _verdict(PLAIN, attack)
    assert verdict == _regenerated(PLAIN, attack, monkeypatch)
    assert verdict[0] == "InputModified", verdict


def test_an_input_the_call_wrote_is_regenerated_and_found(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    honest = _executed(PLAIN)
    (first, *rest), named = honest.inputs
    written = replace(honest, inputs=((first + 1.0, *rest), named))
    assert not _taken(PLAIN, written.inputs)
    assert _verdict(PLAIN, written)[0] == "InputModified"


def test_a_tree_of_another_shape_is_regenerated_over() -> None:
    evidence = _executed(PLAIN)
    for tree in ("inputs", [evidence.inputs], {"args": evidence.inputs}):
        assert not _taken(PLAIN, tree)


def test_on_another_release_the_inputs_are_regenerated(monkeypatch: pytest.MonkeyPatch) -> None:
    evidence = _executed(PLAIN)
    monkeypatch.setattr(taken_inputs, "foreign_release", lambda standard: "9.9")
    assert not _taken(PLAIN, evidence.inputs)


def test_a_test_without_a_locked_digest_is_regenerated(monkeypatch: pytest.MonkeyPatch
                                                      ) -> None:
    evidence = _executed(PLAIN)
    monkeypatch.setattr(taken_inputs, "_LOCKED", {})
    monkeypatch.setattr(type(load_standard()), "input_digests", lambda self, tier: {})
    assert not _taken(PLAIN, evidence.inputs)


def test_a_kind_with_a_case_of_its_own_is_never_built_on_inputs() -> None:
    evidence = _executed(PLAIN)
    config = load_unit_config(load_standard())
    # ceil's method variant locks the very digest of sample 0: the id, not the inputs, says
    # how the op is called.
    assert taken_inputs.case_on_inputs(config, "unit/opinfo/ceil/float32/method",
                                       evidence.inputs) is None
    assert taken_inputs.case_on_inputs(config, "unit/opspec/add_broadcast_both/bfloat16/odd",
                                       evidence.inputs) is None
