"""``autocast``: the op called under ``torch.autocast`` on the device, in a lower-precision dtype.

Autocast decides per op in which dtype it runs: a matrix product or a convolution in the
lower-precision dtype, a loss in float32, a concatenation in the widest of its inputs' dtypes,
any other op in its inputs' own. A device that claims autocast (vendor.yaml ``autocast``)
implements that policy itself: PyTorch registers none for PrivateUse1, so a backend writes its
own kernels on ``AutocastPrivateUse1``, and a policy that runs a loss in bfloat16 or leaves a
matrix product in float32 passes every other test.

``autocast-<dtype>`` takes the op's largest tested OpInfo sample (at most ``MAX_NUMEL``
elements) and calls the op under ``torch.autocast(<device type>, dtype)``. The expected result
dtypes are never a table of the kit's: they are CPU's, the same call under CPU autocast in the
judge (PyTorch's own CPU policy, the one policy of PyTorch's a CPU process runs), compared first
(``autocast-dtype``); then the values, against the float64 reference (float64 is never
autocast, so the reference is the op's exact answer on the inputs as given), judged under the
numerics model in the dtype the result has. The label's dtype applies only to a vendor claiming
autocast in it (``kit.applicability.unclaimed_autocast``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from kit.config_reader import Node
from kit.numerics.model import Widening
from kit.tiers.unit.autocast_ids import AUTOCAST_RULE
from kit.tiers.unit.checking import Fact, UnitCase
from kit.tiers.unit.entries import Comparison, OpEntry
from kit.tiers.unit.samples import sample_case
from kit.tiers.unit.trees import TORCH_DTYPES, tensor_leaves
from kit.tiers.unit.variants.interface import (
    LABEL_SEPARATOR,
    Candidate,
    VariantKind,
    VariantSource,
    tested_largest_first,
)
from kit.tiers.unit.variants.rules import (
    Groups,
    VariantRule,
    class_name,
    dtype_list,
    op_list,
    reject_unknown,
)
from kit.vendors.profile import AUTOCAST_DTYPES

#: The most tensor elements a sample may hold.
MAX_NUMEL = 1 << 12
#: The fact an autocast case observes, compared exactly before any value.
RESULT_DTYPES = "the result's dtypes under autocast"
AUTOCAST_DTYPE = "autocast-dtype"
_FIELDS = {"ops", "dtypes", "autocast", "least_class"}


@dataclass(frozen=True)
class AutocastSample:
    """An OpInfo sample and the lower-precision dtype autocast runs it in."""

    sample: Any
    autocast: str
    #: The rule's ``least_class`` (``autocast_comparison``).
    least_class: str


class Autocast(VariantKind):
    name = AUTOCAST_RULE
    summary = "autocast-<dtype>: the op under torch.autocast on the device; CPU's policy decides"

    def rule(self, rule_name: str, raw: Mapping[str, Any], where: str, groups: Groups
             ) -> VariantRule:
        """``ops``, ``dtypes`` (of the inputs), ``autocast`` (the lower-precision dtypes) and
        ``least_class`` (``autocast_comparison``)."""
        reject_unknown(raw, _FIELDS, where)
        lowered = Node.within(raw.get("autocast"), f"{where}.autocast")
        return VariantRule(rule_name, self.name, op_list(raw.get("ops"), f"{where}.ops", groups),
                           dtype_list(raw.get("dtypes"), f"{where}.dtypes"),
                           autocast=lowered.choices(AUTOCAST_DTYPES, non_empty=True, unique=True),
                           widening=Widening(1.0, class_name(raw, "least_class", where)))

    def build(self, source: VariantSource, accepts: Callable[[Any], bool]) -> dict[str, object]:
        """Per autocast dtype, the largest tested sample CPU runs under autocast."""
        built: dict[str, object] = {}
        candidates = tested_largest_first(source, MAX_NUMEL)
        assert source.rule.widening is not None  # every autocast rule declares least_class
        least = source.rule.widening.least_class
        for lowered in source.rule.autocast:
            for sample in candidates:
                made = AutocastSample(sample, lowered, least)
                if accepts(made):
                    built[f"{source.rule.name}{LABEL_SEPARATOR}{lowered}"] = made
                    break
        return built

    def candidates(self, source: VariantSource) -> Iterator[Candidate]:
        return iter(())  # ``build`` names its samples by autocast dtype

    def case(self, entry: OpEntry, dtype: str, sample: Any, label: str) -> UnitCase:
        """The op's call under autocast on whichever device runs it (CPU's in the judge)."""
        plain = sample_case(entry, dtype, sample.sample, label, exact_layout=True)
        lowered = TORCH_DTYPES[sample.autocast]

        def call(device: str, upcast: bool, inputs: Any) -> Any:
            with torch.autocast(device_type=torch.device(device).type, dtype=lowered):
                return plain.call(device, upcast, inputs)

        return dataclasses.replace(plain, call=call, observe=result_dtypes,
                                   comparison=autocast_comparison(plain.comparison, sample))


def autocast_comparison(forward: Comparison, sample: AutocastSample) -> Comparison:
    """The op's comparison at least the rule's ``least_class``: autocast rounds a
    lower-precision op's inputs before the op (a normwise error, which an elementwise or
    plain-reduction bound does not allow)."""
    return forward.at_least(sample.least_class)


def result_dtypes(inputs: Any, result: Any) -> tuple[Fact, ...]:
    """The dtype of every tensor the call returned under autocast, in order."""
    dtypes = tuple(str(leaf.dtype) for _, leaf in tensor_leaves(result))
    return (Fact(RESULT_DTYPES, AUTOCAST_DTYPE, dtypes),)
