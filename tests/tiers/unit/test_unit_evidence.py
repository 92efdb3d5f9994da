"""The unit tier's evidence: one typed value, held in the evidence file by field name and read
back by the judge, which refuses any other shape as the device's FAIL_SEMANTIC."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kit.execution import load_evidence, save_evidence
from kit.outcomes import ResultMismatch
from kit.tiers.unit.evidence import UnitEvidence

FULL = UnitEvidence(torch.arange(3.0), (torch.ones(2),), {"is-view": True},
                    {"again": torch.arange(3.0), "other": None},
                    {"native": ["aten::add.Tensor"]})


@pytest.mark.parametrize("evidence", [FULL, UnitEvidence(torch.zeros(1), ())],
                         ids=["every-field", "result-and-inputs"])
def test_evidence_survives_the_file_by_field_name(tmp_path: Path, evidence: UnitEvidence
                                                  ) -> None:
    path = tmp_path / "evidence.bin"
    save_evidence(path, evidence.to_tree())
    read = UnitEvidence.from_tree(load_evidence(path))
    assert set(evidence.to_tree()) == set(read.to_tree())
    assert torch.equal(read.result, evidence.result)
    assert read.facts == evidence.facts and read.dispatch == evidence.dispatch
    assert (read.repeated is None) == (evidence.repeated is None)


@pytest.mark.parametrize(
    ("tree", "words"),
    [
        ((torch.zeros(1), ()), "not the call's result and inputs"),
        ({"result": torch.zeros(1)}, "not the call's result and inputs"),
        ({"result": 1, "inputs": (), "verdict": "PASS"}, "unknown parts: verdict"),
        ({"result": 1, "inputs": (), "facts": ["is-view"]}, "facts are not named"),
    ],
    ids=["positional-tuple", "no-inputs", "unknown-part", "facts-not-named"],
)
def test_the_judge_refuses_evidence_of_another_shape(tree: object, words: str) -> None:
    with pytest.raises(ResultMismatch, match=words):
        UnitEvidence.from_tree(tree)
