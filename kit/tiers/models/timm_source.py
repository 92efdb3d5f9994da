"""TIMM (``pytorch-image-models``) models, created without pretrained weights. Optional source.

Entry fields: ``model`` (a ``timm.create_model`` name), ``kwargs`` (optional constructor
arguments, e.g. a small ``num_classes`` or ``img_size``) and ``inputs`` (positional, in order; see
``kit.tiers.models.inputs``). The whole output (the classifier logits) is compared.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kit.errors import InputError
from kit.tiers.models.inputs import make_inputs, validate_inputs
from kit.tiers.models.interface import BuiltModel, ModelCase, ModelSource, seeded
from kit.tiers.models.optional import import_optional, why_unimportable

_REQUIRED = {"model", "inputs"}
_ALLOWED = _REQUIRED | {"kwargs"}


class TimmSource(ModelSource):
    name = "timm"
    optional = True

    def unavailable_reason(self) -> str | None:
        return why_unimportable("timm", "timm")

    def validate_entry(self, model: str, entry: Mapping[str, Any], where: str) -> None:
        if not _REQUIRED <= set(entry) <= _ALLOWED:
            raise InputError(
                f"{where}: a timm model has the fields {sorted(_REQUIRED)} and optionally kwargs"
            )
        if not isinstance(entry["model"], str) or not entry["model"]:
            raise InputError(f"{where}.model: expected a timm model name")
        if not isinstance(entry.get("kwargs", {}), Mapping):
            raise InputError(f"{where}.kwargs: expected a mapping of constructor arguments")
        validate_inputs(entry["inputs"], f"{where}.inputs")

    def build(self, case: ModelCase) -> BuiltModel:
        timm = import_optional("timm")
        kwargs = dict(case.config.get("kwargs", {}))
        with seeded(case.seed):
            module = timm.create_model(case.config["model"], pretrained=False, **kwargs)
        inputs = make_inputs(case.config["inputs"], case.seed)
        return BuiltModel(module.eval(), tuple(inputs.values()))
