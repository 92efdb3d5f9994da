"""What every model source provides: cases from the standard, and deterministic built models."""

from __future__ import annotations

import abc
import contextlib
import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from kit.json_shape import ParsedMapping
from kit.numerics.criteria import Tolerance

if TYPE_CHECKING:
    import torch

#: Example inputs: keyword arguments (Hugging Face style) or positional arguments.
ModelInputs = Mapping[str, "torch.Tensor"] | tuple["torch.Tensor", ...]


@dataclass(frozen=True)
class ModelCase:
    """One model test of the standard: a model of a source, run through one flow."""

    source: str
    name: str
    flow: str
    test_id: str
    #: The model's entry in ``models.yaml`` as parsed: source-specific fields, which each
    #: source checks as it reads them (``ModelSource.build``).
    config: ParsedMapping = field(hash=False)
    tolerance: Tolerance
    #: dtype the CPU reference runs in: float64 unless the model cannot run in it.
    reference_dtype: str = "float64"
    #: A training step on the eager path (``.../train``, ``kit.tiers.models.training``), not
    #: the forward output.
    training: bool = False

    @property
    def seed(self) -> int:
        """Seed for weights and inputs; from the model's id, so every flow sees the same model."""
        return seed_for(f"models/{self.source}/{self.name}")

    @property
    def output(self) -> str | None:
        """The key (or attribute) of the model output that is compared; None: all of it."""
        value = self.config.get("output")
        return None if value is None else str(value)


@dataclass(frozen=True)
class BuiltModel:
    """A model in eval mode on the CPU in float32, and the example inputs it is called with."""

    module: torch.nn.Module
    inputs: ModelInputs


class CasesBySource(Protocol):
    """What a source reads of ``models.yaml`` (``kit.tiers.models.config.ModelsConfig``, which
    imports this module): declared here, so that the two do not import each other."""

    def cases_of(self, source: str) -> list[ModelCase]: ...


class ModelSource(abc.ABC):
    """One extension axis of the model tier: where models come from (HF, TIMM, TorchBench)."""

    #: The source's segment in stable ids: ``models/<name>/<model>/<flow>``.
    name: str
    #: Whether the standard lets a vendor run without it: only then is its absence a reason
    #: for NOT_APPLICABLE; an unavailable required source (a kit dependency) is an error.
    optional: bool = False

    @abc.abstractmethod
    def unavailable_reason(self) -> str | None:
        """Why this source cannot be used here (its package is missing), or None when it can."""

    @abc.abstractmethod
    def validate_entry(self, model: str, entry: Mapping[str, Any], where: str) -> None:
        """Raise ``InputError`` naming ``where`` when ``entry`` is malformed for this source.

        Runs when the standard is read, so it must not import the source's package.
        """

    @abc.abstractmethod
    def build(self, case: ModelCase) -> BuiltModel:
        """Build ``case``'s model with seeded weights and inputs: the same case, the same bits."""

    def cases(self, models_config: CasesBySource) -> list[ModelCase]:
        """Every (model, flow) case this source contributes to the standard."""
        return models_config.cases_of(self.name)


def seed_for(key: str) -> int:
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:4], "big")


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Run with torch's global RNG seeded (model constructors draw from it), then restore it."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield
