"""``arity<N>``: a variadic op (cat, stack) given N inputs with fresh values."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

import torch

from kit.tiers.unit.variants.interface import Candidate, VariantKind, VariantSource
from kit.tiers.unit.variants.rules import Groups, VariantRule

_NAME = re.compile(r"arity([1-9][0-9]{0,3})\Z")


class Arity(VariantKind):
    name = "arity"
    summary = "arity<N>: a variadic op given N inputs, shapes from its samples, fresh values"

    def claims(self, rule_name: str) -> bool:
        return _NAME.match(rule_name) is not None

    @property
    def spelling(self) -> str:
        return "arity<N>"

    def rule(self, rule_name: str, raw: Mapping[str, Any], where: str, groups: Groups
             ) -> VariantRule:
        match = _NAME.match(rule_name)
        assert match is not None  # claims() said so
        return replace(super().rule(rule_name, raw, where, groups), size=int(match.group(1)))

    def candidates(self, source: VariantSource) -> Iterator[Candidate]:
        """Samples whose input is a list of non-empty tensors, the longest list first: N
        inputs with their shapes taken in turn from the list, and fresh values."""
        lists = [
            s
            for s in source.samples
            if isinstance(s.input, (list, tuple))
            and s.input
            and all(isinstance(t, torch.Tensor) and t.dim() > 0 and t.numel() > 0
                    for t in s.input)
        ]
        lists.sort(key=lambda s: -len(s.input))
        for sample in lists:
            yield functools.partial(_with_inputs, sample, source.rule.size)


def _with_inputs(sample: Any, count: int) -> Any:
    from torch.testing import make_tensor
    from torch.testing._internal.opinfo.core import SampleInput

    shapes = [t.shape for t in sample.input]
    dtype = sample.input[0].dtype
    tensors = [
        make_tensor(shapes[i % len(shapes)], dtype=dtype, device="cpu") for i in range(count)
    ]
    return SampleInput(tensors, args=tuple(sample.args), kwargs=dict(sample.kwargs))
