"""What a kind of variant is: the rules it claims, the samples it builds, the case that runs one.

A new kind of unit test built from an op's OpInfo samples (edge values, another way of calling
the op, another layout) is one module of this package holding a ``VariantKind``, listed in
``kit.tiers.unit.variants.registry``; ``unit.yaml``'s ``coverage.variants`` then names the ops
that get it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from kit.tiers.unit.checking import UnitCase
from kit.tiers.unit.entries import OpEntry
from kit.tiers.unit.samples import numel_of_sample, sample_case, seed_of
from kit.tiers.unit.seeding import seeded_rngs
from kit.tiers.unit.trees import TORCH_DTYPES
from kit.tiers.unit.variants.rules import (
    Groups,
    VariantRule,
    dtype_list,
    op_list,
    reject_unknown,
)

#: A candidate: builds the sample (under the candidate's seed), or None if it does not fit.
Candidate = Callable[[], Any]
#: Separates a rule's name from the label of one of several samples it builds (``reference-3``).
LABEL_SEPARATOR = "-"


@dataclass(frozen=True)
class VariantSource:
    """What a variant is built from: the op's OpInfo samples in one dtype."""

    entry: OpEntry
    dtype: str
    rule: VariantRule
    #: Every OpInfo sample of the op in ``dtype``.
    samples: tuple[Any, ...]
    #: The positions of the samples the standard runs.
    tested: tuple[int, ...]

    @property
    def torch_dtype(self) -> torch.dtype:
        return TORCH_DTYPES[self.dtype]

    def seeded(self, candidate: Candidate, number: int | str) -> Any:
        """Build ``candidate`` under the seed of (op, dtype, rule, ``number``): every process
        builds the same sample."""
        entry = self.entry
        with seeded_rngs(seed_of(f"{entry.name}.{entry.variant}", self.dtype, self.rule.name,
                                 str(number))):
            return candidate()


class VariantKind(ABC):
    """One kind of variant: its rule in ``unit.yaml``, its samples, and how one runs."""

    #: The kind's name: the rule of that name is built by it (``claims`` may take more names).
    name: ClassVar[str]
    #: One line for ``unit.yaml`` readers and error messages.
    summary: ClassVar[str]

    #: Whether CPU's check of a sample only decides whether its segment exists, never which
    #: candidate the segment names: a run then builds the one sample an id names
    #: (``sample_named``), and the standard's lock, which ran the check, says it exists.
    builds_by_name: ClassVar[bool] = False

    def sample_named(self, source: VariantSource, segment: str) -> Any | None:
        """The sample ``segment`` names, built without asking CPU (``builds_by_name`` kinds);
        None where the rule names no such segment."""
        raise NotImplementedError(f"{self.name} builds its samples together")

    def claims(self, rule_name: str) -> bool:
        """Whether a rule named ``rule_name`` is of this kind."""
        return rule_name == self.name

    @property
    def spelling(self) -> str:
        """How the rule names this kind claims are written, for messages."""
        return self.name

    def rule(self, rule_name: str, raw: Mapping[str, Any], where: str, groups: Groups
             ) -> VariantRule:
        """The rule from its ``unit.yaml`` mapping: ``ops`` and optional ``dtypes``."""
        reject_unknown(raw, {"ops", "dtypes"}, where)
        return VariantRule(
            rule_name,
            self.name,
            op_list(raw.get("ops"), f"{where}.ops", groups),
            dtype_list(raw.get("dtypes"), f"{where}.dtypes"),
        )

    def build(self, source: VariantSource, accepts: Callable[[Any], bool]) -> dict[str, object]:
        """The variant's samples by id segment (``accepts``: whether CPU runs a sample).

        By default one sample named as the rule: the first candidate CPU accepts, none if it
        accepts none. A kind of several samples names them ``<rule>-<label>``.
        """
        for number, candidate in enumerate(self.candidates(source)):
            sample = source.seeded(candidate, number)
            if sample is not None and accepts(sample):
                return {source.rule.name: sample}
        return {}

    @abstractmethod
    def candidates(self, source: VariantSource) -> Iterator[Candidate]:
        """The candidate samples, in order of preference."""

    def case(self, entry: OpEntry, dtype: str, sample: Any, label: str) -> UnitCase:
        """The unit case running ``sample``: by default the op called on it, every tensor placed
        on the device with exactly the layout it was built with."""
        return sample_case(entry, dtype, sample, label, exact_layout=True)


def rule_of_segment(segment: str, rules: tuple[VariantRule, ...]) -> VariantRule | None:
    """The rule whose sample an id's last segment names (``large``, ``reference-3``)."""
    name = segment.split(LABEL_SEPARATOR, 1)[0]
    return next((rule for rule in rules if rule.name == name), None)


def largest_first(samples: tuple[Any, ...], max_numel: int) -> list[Any]:
    """The non-empty samples of at most ``max_numel`` elements, the largest first (OpInfo's
    order among equals)."""
    fitting = [s for s in samples if 0 < numel_of_sample(s) <= max_numel]
    return sorted(fitting, key=lambda s: -numel_of_sample(s))


def tested_largest_first(source: VariantSource, max_numel: int) -> list[Any]:
    """The samples the standard runs, of at most ``max_numel`` elements, the largest first."""
    return largest_first(tuple(source.samples[i] for i in source.tested), max_numel)
