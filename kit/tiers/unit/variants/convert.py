"""``convert``: a conversion op (``x.half()``, ``x.long()``, ``x.bool()`` ...) given the values
that decide whether a conversion is right: ties between two neighbours of a narrower float,
overflow, subnormals, NaN, fractions truncated toward zero, integers past a float's precision.

The op names the target dtype and the tested dtype is the source:
``unit/opinfo/<target op>/<source dtype>/convert-<label>``, one or two labelled samples per
pair (``kit.tiers.unit.variants.convert_values`` says which). Conversions are correctly
rounded, so the ops are ``exact`` against CPU's conversion of the very same input. A wrong
rounding mode (truncating float32 to bfloat16) is far inside the bounds of the composite ops
that happen to convert; only these samples catch it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import torch

from kit.tiers.unit.variants.convert_values import Builder, labelled_builders
from kit.tiers.unit.variants.interface import (
    LABEL_SEPARATOR,
    Candidate,
    VariantKind,
    VariantSource,
)

#: The conversion ops by OpInfo name, and the dtype each converts to.
TARGETS = {
    "double": torch.float64,
    "float": torch.float32,
    "half": torch.float16,
    "bfloat16": torch.bfloat16,
    "long": torch.int64,
    "int": torch.int32,
    "bool": torch.bool,
}


class Convert(VariantKind):
    name = "convert"
    summary = ("a conversion op given ties, overflow, subnormals, NaN, fractions and integers "
               "past a float's precision")

    def build(self, source: VariantSource, accepts: Callable[[Any], bool]) -> dict[str, object]:
        """One sample per label of the (source, target) pair, where CPU accepts it."""
        built: dict[str, object] = {}
        for label, builder in conversion_builders(source.entry.name, source.torch_dtype).items():
            sample = source.seeded(functools.partial(conversion_sample, builder), label)
            if accepts(sample):
                built[f"{source.rule.name}{LABEL_SEPARATOR}{label}"] = sample
        return built

    def candidates(self, source: VariantSource) -> Iterator[Candidate]:
        return iter(())  # ``build`` names its samples by label


def conversion_builders(op_name: str, source: torch.dtype) -> dict[str, Builder]:
    """The labelled parts of the conversion op ``op_name`` from ``source`` (none: not a
    conversion op)."""
    target = TARGETS.get(op_name)
    return {} if target is None else labelled_builders(source, target)


def conversion_sample(builder: Builder) -> Any:
    """The built values in a random order (a SampleInput of one tensor)."""
    from torch.testing._internal.opinfo.core import SampleInput

    values = builder()
    return SampleInput(values[torch.randperm(values.numel())])
