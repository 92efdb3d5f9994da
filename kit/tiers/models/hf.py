"""Hugging Face ``transformers`` models built from a config with seeded random weights.

Fully offline by construction: the architecture is instantiated from a config written in
``models.yaml`` (``AutoConfig.for_model``), never ``from_pretrained``, and ``HF_HUB_OFFLINE=1``
is set before ``transformers`` is imported so nothing can reach the hub by accident.
``transformers`` is imported only when a model is built, never when the standard is read.

Entry fields: ``architecture`` (a ``transformers`` model class, e.g. ``LlamaForCausalLM``),
``config`` (``model_type`` plus config fields), ``inputs`` (see ``kit.tiers.models.inputs``) and
``output`` (the output field compared, e.g. ``logits``).
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from kit.errors import InputError
from kit.tiers.models.inputs import make_inputs, validate_inputs
from kit.tiers.models.interface import BuiltModel, ModelCase, ModelSource, seeded

_CLASS_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*$")
_FIELDS = {"architecture", "config", "inputs", "output"}


def import_transformers() -> ModuleType:
    os.environ["HF_HUB_OFFLINE"] = "1"
    return importlib.import_module("transformers")


class HuggingFaceSource(ModelSource):
    name = "hf"

    def unavailable_reason(self) -> str | None:
        try:
            import_transformers()
        except ImportError as exc:
            return f"transformers cannot be imported ({type(exc).__name__}: {exc})"
        return None

    def validate_entry(self, model: str, entry: Mapping[str, Any], where: str) -> None:
        if set(entry) != _FIELDS:
            raise InputError(f"{where}: an hf model has exactly the fields {sorted(_FIELDS)}")
        if not isinstance(entry["architecture"], str) or not _CLASS_NAME.match(
            entry["architecture"]
        ):
            raise InputError(f"{where}.architecture: expected a transformers class name")
        config = entry["config"]
        if not isinstance(config, Mapping) or not isinstance(config.get("model_type"), str):
            raise InputError(f"{where}.config: expected a mapping with a model_type")
        if not isinstance(entry["output"], str):
            raise InputError(f"{where}.output: expected the name of an output field")
        validate_inputs(entry["inputs"], f"{where}.inputs")

    def build(self, case: ModelCase) -> BuiltModel:
        transformers = import_transformers()
        settings = dict(case.config["config"])
        config = transformers.AutoConfig.for_model(settings.pop("model_type"), **settings)
        architecture = case.config["architecture"]
        model_class = getattr(transformers, architecture, None)
        if model_class is None:
            raise InputError(
                f"{case.test_id}: transformers {transformers.__version__} has no {architecture}"
            )
        with seeded(case.seed):
            module = model_class(config)
        return BuiltModel(module.eval(), make_inputs(case.config["inputs"], case.seed))
