"""The training steps as readers see them: from records alone (show, summary.md, portal)."""

from __future__ import annotations

from typing import Any

from kit.formats.markdown import training_section
from kit.report.training_summary import first_off_text, is_training_step, training_steps

OFF = {"quantity": "adamw", "first_off": "model.embed_tokens.weight",
       "last_off": "lm_head.weight", "off": 27, "parameters": 27}
RECORDS: list[dict[str, Any]] = [
    {"id": "models/hf/qwen2/train", "status": "FAIL_NUMERIC", "details": {"training": OFF}},
    {"id": "models/hf/llama/train", "status": "PASS", "details": {}},
    {"id": "models/hf/llama/eager", "status": "PASS", "details": {}},
    {"id": "unit/opinfo/add/float32/train", "status": "PASS", "details": {}},
]


def test_only_model_ids_ending_in_train_are_training_steps() -> None:
    assert [s.test_id for s in training_steps(RECORDS)] == [
        "models/hf/llama/train", "models/hf/qwen2/train"]
    assert not is_training_step("not an id")


def test_a_failing_step_says_which_quantity_and_parameter_went_off_first() -> None:
    assert first_off_text({"training": OFF}) == (
        "AdamW-updated value of model.embed_tokens.weight (first of 27 parameter(s) off)")
    assert first_off_text({"training": {"quantity": "loss", "first_off": None}}) == "the loss"
    assert first_off_text({"failure": "other-parameters"}) == ""


def test_summary_md_has_a_training_section_only_where_steps_ran() -> None:
    lines = training_section({"records": RECORDS})
    assert lines[0] == "## Training steps (model tier): 1 of 2 passed"
    qwen2 = next(line for line in lines if "qwen2" in line)
    assert "FAIL_NUMERIC" in qwen2 and r"AdamW-updated value of model.embed\_tokens.weight" in qwen2
    assert training_section({"records": RECORDS[2:]}) == []
