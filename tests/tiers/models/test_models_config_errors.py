"""A malformed models.yaml is refused with one line naming the file and the field."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kit.errors import InputError
from kit.tiers.models.cases import SOURCES
from kit.tiers.models.config import load_models_config
from kit.tiers.models.flows import FLOWS

VALID = """\
tolerance: {atol: 1.0e-4, rtol: 1.0e-3}
flows: [eager]
sources:
  hf:
    llama:
      architecture: LlamaForCausalLM
      config: {model_type: llama, vocab_size: 96}
      inputs:
        input_ids: {kind: tokens, shape: [2, 8], high: 96}
        attention_mask: {kind: padding_mask, shape: [2, 8], padded: 2}
      output: logits
  timm:
    resnet18:
      model: resnet18
      inputs:
        x: {kind: normal, shape: [1, 3, 32, 32]}
  torchbench:
    dcgan: {model: dcgan, batch_size: 2}
"""

#: Attack name -> (text replaced in VALID, replacement, expected field and problem in the error).
ATTACKS = {
    "unknown_source": ("  timm:\n", "  pypi:\n", "sources.pypi: unknown key; the keys here are"),
    "model_name_escapes_the_id": (
        "    llama:\n", "    llama/../../unit:\n", "sources.hf.llama/../../unit: model names"
    ),
    "pretrained_weights_download": (
        "      output: logits\n",
        "      output: logits\n      pretrained: meta-llama/Llama-2-7b-hf\n",
        "sources.hf.llama: an hf model has exactly the fields",
    ),
    "tolerance_loosened_without_reason": (
        "      output: logits\n",
        "      output: logits\n      tolerance: {atol: 1, rtol: 1}\n",
        "sources.hf.llama.why: a tolerance or reference override needs a reason",
    ),
    "negative_tolerance": (
        "{atol: 1.0e-4,", "{atol: -1.0,", "tolerance.atol: expected a number >= 0"
    ),
    "unknown_flow": (
        "flows: [eager]", "flows: [eager, tensorrt]", "flows.1: expected one of eager"
    ),
    "duplicated_model_key": (
        "  torchbench:\n    dcgan:",
        "  torchbench:\n    dcgan: {model: x, batch_size: 1}\n    dcgan:",
        "duplicate key 'dcgan'",
    ),
    "input_kind_reads_a_file": (
        "{kind: normal,", "{kind: file,", "sources.timm.resnet18.inputs.x.kind: expected one of"
    ),
    "padding_masks_the_whole_row": (
        "padded: 2}", "padded: 8}", "inputs.attention_mask.padded: expected an integer in [0, 8)"
    ),
    "reference_in_half_precision": (
        "      output: logits\n",
        "      output: logits\n      reference: float16\n      why: faster\n",
        "sources.hf.llama.reference: expected one of",
    ),
    "torchbench_module_path_injection": (
        "{model: dcgan,", "{model: ../../evil,", "sources.torchbench.dcgan.model: expected"
    ),
    "architecture_is_arbitrary_code": (
        "architecture: LlamaForCausalLM", "architecture: __import__('os')",
        "sources.hf.llama.architecture: expected a transformers class name",
    ),
}


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "models.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_models_config_valid_fixture_loads(tmp_path: Path) -> None:
    config = load_models_config(_write(tmp_path, VALID), SOURCES, FLOWS)
    assert [case.test_id for case in config.cases] == [
        "models/hf/llama/eager", "models/timm/resnet18/eager", "models/torchbench/dcgan/eager"
    ]


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_models_config_attack_is_refused(tmp_path: Path, attack: str) -> None:
    old, new, expected = ATTACKS[attack]
    assert old in VALID
    path = _write(tmp_path, VALID.replace(old, new, 1))
    with pytest.raises(InputError) as refused:
        load_models_config(path, SOURCES, FLOWS)
    message = str(refused.value)
    assert message.startswith(str(path)), message
    assert expected in message
    assert "\n" not in message


def test_models_config_override_with_reason_applies_to_that_model_only(tmp_path: Path) -> None:
    text = VALID.replace(
        "      output: logits\n",
        textwrap.indent("output: logits\ntolerance: {atol: 2.0e-4, rtol: 2.0e-3}\n"
                        "reference: float32\nwhy: measured\n", "      "),
    )
    config = load_models_config(_write(tmp_path, text), SOURCES, FLOWS)
    by_id = {case.test_id: case for case in config.cases}
    llama, resnet = by_id["models/hf/llama/eager"], by_id["models/timm/resnet18/eager"]
    assert (llama.tolerance.atol, llama.reference_dtype) == (2.0e-4, "float32")
    assert (resnet.tolerance.atol, resnet.reference_dtype) == (1.0e-4, "float64")
    assert "why" not in llama.config and "tolerance" not in llama.config
