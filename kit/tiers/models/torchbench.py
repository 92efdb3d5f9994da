"""TorchBench (``torchbenchmark``) models with their own example inputs. Optional source.

Entry fields: ``model`` (a module of ``torchbenchmark.models``, e.g. ``phlippe_resnet``) and
``batch_size``. The benchmark is constructed on the CPU for inference (``test="eval"``) under the
case's seed, so its random weights and example inputs are reproducible; the whole output is
compared. A benchmark whose own extra dependencies are missing is NOT_APPLICABLE, like an absent
source: TorchBench installs them per model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from kit.errors import InputError
from kit.outcomes import not_applicable
from kit.results import NotApplicableReason
from kit.tiers.models.interface import BuiltModel, ModelCase, ModelInputs, ModelSource, seeded
from kit.tiers.models.optional import import_optional, why_unimportable

PACKAGE = "torchbenchmark"
_FIELDS = {"model", "batch_size"}


class TorchBenchSource(ModelSource):
    name = "torchbench"
    optional = True

    def unavailable_reason(self) -> str | None:
        return why_unimportable(PACKAGE, "torchbench (torchbenchmark)")

    def validate_entry(self, model: str, entry: Mapping[str, Any], where: str) -> None:
        if set(entry) != _FIELDS:
            raise InputError(
                f"{where}: a torchbench model has exactly the fields {sorted(_FIELDS)}"
            )
        name = entry["model"]
        if not isinstance(name, str) or not name.isidentifier():
            raise InputError(f"{where}.model: expected a torchbenchmark.models module name")
        size = entry["batch_size"]
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise InputError(f"{where}.batch_size: expected a positive integer")

    def build(self, case: ModelCase) -> BuiltModel:
        name = case.config["model"]
        try:
            benchmark_module = import_optional(f"{PACKAGE}.models.{name}")
        except ModuleNotFoundError as exc:
            not_applicable(
                NotApplicableReason.OPTIONAL_SOURCE_ABSENT,
                f"torchbench model {name} needs {exc.name}, which is not installed",
            )
        with seeded(case.seed):
            benchmark = benchmark_module.Model(
                test="eval", device="cpu", batch_size=case.config["batch_size"]
            )
            module, example_inputs = benchmark.get_module()
        return BuiltModel(module.eval(), _detached(example_inputs))


def _detached(example_inputs: Any) -> ModelInputs:
    """Own copies of the benchmark's inputs, as keyword (HF benchmarks) or positional args."""
    if isinstance(example_inputs, Mapping):
        return {key: _copy(value) for key, value in example_inputs.items()}
    return tuple(_copy(value) for value in example_inputs)


def _copy(value: Any) -> Any:
    return value.detach().clone() if isinstance(value, torch.Tensor) else value
