"""``scale``: inputs past 2^16, 2^24 and (for 1-byte dtypes) 2^31 elements, so 16-, 24- and
32-bit index and counter overflows show.

Inputs are built without Python loops from ``arange`` patterns whose exact results are known
(a sum of a period-4 pattern, a unique maximum near the end, indices reaching the last
element), so the float64 reference is cheap and every CPU computes the same answer. Ids:
``<op>/<dtype>/scale-2p<power>``; whether one fits the memory budget is decided by the kit
before it runs (``kit.tiers.unit.scale_budget``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import torch

from kit.errors import InputError
from kit.tiers.unit.scale_budget import scale_elements, scale_power
from kit.tiers.unit.variants.interface import (
    LABEL_SEPARATOR,
    Candidate,
    VariantKind,
    VariantSource,
)
from kit.tiers.unit.variants.rules import (
    Groups,
    VariantRule,
    count,
    dtype_list,
    op_list,
    reject_unknown,
)

#: Powers of two a rule may name: past 2^16 and 2^24 for any dtype, 2^31 for 1-byte ones.
POWERS = (16, 24, 31)
ONE_BYTE_POWER = 31
ONE_BYTE_DTYPES = ("bool",)
_FIELDS = {"ops", "dtypes", "powers", "memory_budget_mib"}
#: Indices taken by index_select and gather: every STRIDE-th from the last element down.
INDEX_STRIDE = 997
#: The bins scatter_add counts into.
BINS = 1024


class Scale(VariantKind):
    name = "scale"
    summary = "inputs past 2^16, 2^24 and (1-byte dtypes) 2^31 elements, arange patterns"

    def rule(self, rule_name: str, raw: Mapping[str, Any], where: str, groups: Groups
             ) -> VariantRule:
        """``ops``, ``dtypes``, ``powers`` (of 16, 24, 31) and ``memory_budget_mib``."""
        reject_unknown(raw, _FIELDS, where)
        powers = raw.get("powers")
        if not isinstance(powers, list) or not powers or not set(powers) <= set(POWERS):
            raise InputError(f"{where}.powers: expected a list of powers from {POWERS}")
        budget = count(raw.get("memory_budget_mib"), 1, f"{where}.memory_budget_mib",
                       "the memory budget in MiB")
        ops = op_list(raw.get("ops"), f"{where}.ops", groups)
        unknown = sorted(set(ops) - set(PATTERNS))
        if unknown:
            raise InputError(f"{where}.ops: no scale pattern for {unknown[0]!r} "
                             f"(known: {sorted(PATTERNS)})")
        return VariantRule(rule_name, self.name, ops, dtype_list(raw.get("dtypes"),
                           f"{where}.dtypes"), powers=tuple(sorted(powers)),
                           memory_budget_mib=budget)

    builds_by_name = True

    def build(self, source: VariantSource, accepts: Callable[[Any], bool]) -> dict[str, object]:
        """One sample per power that suits the dtype, where CPU accepts it."""
        built: dict[str, object] = {}
        for power in source.rule.powers:
            sample = _sample_past(source, power)
            if sample is not None and accepts(sample):
                built[f"{source.rule.name}{LABEL_SEPARATOR}2p{power}"] = sample
        return built

    def sample_named(self, source: VariantSource, segment: str) -> Any | None:
        """The input ``scale-2p<power>`` names, if the rule lists that power and it suits the
        dtype."""
        power = scale_power(segment)
        return None if power is None else _sample_past(source, power)

    def candidates(self, source: VariantSource) -> Iterator[Candidate]:
        return iter(())  # ``build`` names its samples by size


def _sample_past(source: VariantSource, power: int) -> Any | None:
    """The op's input past 2^power elements, if the rule lists the power and it suits the
    dtype (2^31 for 1-byte dtypes only)."""
    if power not in source.rule.powers:
        return None
    if (power == ONE_BYTE_POWER) != (source.dtype in ONE_BYTE_DTYPES):
        return None
    pattern = PATTERNS[source.entry.key]
    return source.seeded(
        functools.partial(pattern, scale_elements(power), source.torch_dtype), power)


def _sample(*positional: Any) -> Any:
    from torch.testing._internal.opinfo.core import SampleInput

    return SampleInput(positional[0], args=tuple(positional[1:]))


def _period(n: int, period: int) -> torch.Tensor:
    # In place where the values allow: each 2^24-element temporary is 64 MiB of fresh pages
    # (a lock builds every scale input four times; the locked digests pin the values).
    return torch.arange(n, dtype=torch.int32).remainder_(period)


def _scaled(values: torch.Tensor, factor: float) -> torch.Tensor:
    """``values * factor``, in place where the product keeps the dtype (a floating one)."""
    return values.mul_(factor) if values.is_floating_point() else values * factor


def _positive(n: int, dtype: torch.dtype) -> Any:
    """0.25, 0.5, 0.75, 1.0 repeated: every element adds to a sum (its tail too)."""
    return _sample(_scaled(_period(n, 4).add_(1).to(dtype), 0.25))


def _zero_mean(n: int, dtype: torch.dtype) -> torch.Tensor:
    """-3 .. 3 repeated: running sums stay small and exact."""
    return _period(n, 7).sub_(3).to(dtype)


def _peak_near_end(n: int, dtype: torch.dtype) -> Any:
    values = _zero_mean(n, dtype)
    values[n - 5] = 10
    return _sample(values)


def _along_dim(n: int, dtype: torch.dtype) -> Any:
    return _sample(_zero_mean(n, dtype), 0)


def _softmax(n: int, dtype: torch.dtype) -> Any:
    return _sample(_scaled(_zero_mean(n, dtype), 0.5), 0)


def _pair(n: int, dtype: torch.dtype) -> Any:
    return _sample(_zero_mean(n, dtype), _period(n, 5).sub_(2).to(dtype))


def _indexed(n: int, dtype: torch.dtype) -> Any:
    """Distinct-ish values read at indices down from the last element."""
    indices = torch.arange(n - 1, -1, -INDEX_STRIDE, dtype=torch.int64)
    return _sample(_period(n, 8191).to(dtype), 0, indices)


def _scatter_counts(n: int, dtype: torch.dtype) -> Any:
    """Ones added into BINS bins in turn: each bin counts n / BINS."""
    bins = torch.arange(n, dtype=torch.int64).remainder_(BINS)
    return _sample(torch.zeros(BINS, dtype=dtype), 0, bins, torch.ones(n, dtype=dtype))


def _one_true_near_end(n: int, dtype: torch.dtype) -> Any:
    values = torch.zeros(n, dtype=dtype)
    values[n - 5] = True
    return _sample(values)


#: Per op key, the input of ``n`` elements in a dtype.
PATTERNS: dict[str, Callable[[int, torch.dtype], Any]] = {
    "sum": _positive,
    "mean": _positive,
    "amax": _peak_near_end,
    "argmax": _peak_near_end,
    "cumsum": _along_dim,
    "softmax": _softmax,
    "add": _pair,
    "mul": _pair,
    "index_select": _indexed,
    "gather": _indexed,
    "scatter_add": _scatter_counts,
    "any": _one_true_near_end,
}
