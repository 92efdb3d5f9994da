"""The OpInfo half of the unit tier: PyTorch's own op samples and variants of them, on the device.

Stable ids: ``unit/opinfo/<op>/<dtype>/<sample>``, where ``<op>`` is the OpInfo name plus
``.<variant_test_name>`` if any, and ``<sample>`` is either

- the position of the sample among ALL the OpInfo's CPU samples in that dtype
  (``op.sample_inputs_func``, generated under a seed from (op, dtype); ``kit.tiers.unit.samples``):
  an op runs every sample, or, if ``unit.yaml`` declares it ``spread``, that many spread evenly
  over its samples (first and last included). A position names the same input whatever the
  selection, so ids stay valid when more samples are selected;
- or a variant's segment (``empty``, ``noncontiguous``, ``large``, ``extremes``, ``arity4``;
  ``<variant>-<label>`` where a kind builds several samples): an extra sample built from the
  op's samples (``kit.tiers.unit.variants``), for the ops ``unit.yaml`` declares it for, and
  only where the CPU reference accepts it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kit.errors import InputError
from kit.test_ids import TestId
from kit.tiers.unit.checking import UnitCase
from kit.tiers.unit.config import UnitConfig
from kit.tiers.unit.entries import OpEntry
from kit.tiers.unit.samples import find_opinfo, opinfo_samples, sample_case
from kit.tiers.unit.trees import TORCH_DTYPES
from kit.tiers.unit.variants import variant_case_of, variant_samples
from kit.tiers.unit.variants.interface import rule_of_segment

PREFIX = "unit/opinfo/"
#: A variant's id segment: never all digits (those are sample positions), no spaces/brackets.
VARIANT_SEGMENT = re.compile(r"[a-z][a-z0-9_-]*\Z")


@dataclass(frozen=True)
class OpinfoCaseId:
    op_key: str
    dtype: str
    #: The position among the op's OpInfo samples in ``dtype``, or a variant's name.
    sample: int | str

    def __str__(self) -> str:
        return f"{PREFIX}{self.op_key}/{self.dtype}/{self.sample}"


def parse_opinfo_id(test_id: str) -> OpinfoCaseId:
    parsed = TestId.read(test_id, ("unit",))
    if parsed is None or len(parsed.segments) != 4 or f"{parsed.prefix(1)}/" != PREFIX:
        raise InputError(
            f"not an OpInfo unit test id: {test_id!r} (expected {PREFIX}OP/DTYPE/SAMPLE)"
        )
    _, op_key, dtype, last = parsed.segments
    if last.isdigit():
        return OpinfoCaseId(op_key, dtype, int(last))
    if VARIANT_SEGMENT.match(last):
        return OpinfoCaseId(op_key, dtype, last)
    raise InputError(
        f"not an OpInfo unit test id: {test_id!r} (the last segment is a sample position "
        "or a variant name)"
    )


def sample_indices(count: int, max_samples: int) -> list[int]:
    """``max_samples`` positions spread evenly over ``count`` samples, first and last included."""
    if count <= max_samples:
        return list(range(count))
    if max_samples == 0:
        return []
    if max_samples == 1:
        return [0]
    return sorted({round(i * (count - 1) / (max_samples - 1)) for i in range(max_samples)})


def selected_positions(config: UnitConfig, entry: OpEntry, dtype: str) -> tuple[int, ...]:
    """The positions of the op's OpInfo samples the standard runs in ``dtype``."""
    count = len(opinfo_samples(entry, dtype))
    cap = config.coverage.samples_cap(entry.key)
    return tuple(range(count)) if cap is None else tuple(sample_indices(count, cap))


def selected_samples(config: UnitConfig, entry: OpEntry, dtype: str) -> Mapping[int, Any]:
    """The op's tested OpInfo samples in ``dtype`` by position: the same in every process."""
    samples = opinfo_samples(entry, dtype)
    return {i: samples[i] for i in selected_positions(config, entry, dtype)}


def opinfo_test_ids(config: UnitConfig) -> list[str]:
    ids = []
    for entry in config.ops:
        supported = find_opinfo(entry).supported_dtypes("cpu")
        for dtype in entry.dtypes:
            if TORCH_DTYPES[dtype] not in supported:
                raise InputError(
                    f"{config.source}: op {entry.key}: OpInfo does not support {dtype} on CPU"
                )
            for index in selected_positions(config, entry, dtype):
                ids.append(str(OpinfoCaseId(entry.key, dtype, index)))
            tested = selected_positions(config, entry, dtype)
            for rule in config.coverage.variants_of(entry.key, dtype):
                segments = variant_samples(entry, dtype, rule, tested)
                ids += [str(OpinfoCaseId(entry.key, dtype, segment)) for segment in segments]
    return ids


class NoSuchSample(InputError):
    """A locked id whose sample the installed torch's OpInfo no longer generates: a stale list
    on the standard's own release, a test not in the release on another (a canary's run,
    ``kit.tiers.unit.release_drift``)."""


def opinfo_unit_case(config: UnitConfig, test_id: str) -> UnitCase:
    """The inputs and call of one OpInfo test, rebuilt identically in any process."""
    case = parse_opinfo_id(test_id)
    entry = config.op(case.op_key)
    if case.dtype not in entry.dtypes:
        raise InputError(f"{test_id}: dtype {case.dtype} is not tested for {entry.key}")
    found: UnitCase | None = None
    if isinstance(case.sample, int):
        sample = selected_samples(config, entry, case.dtype).get(case.sample)
        if sample is not None:
            found = sample_case(entry, case.dtype, sample, f"{entry.key} sample {case.sample}")
    else:
        rule = rule_of_segment(case.sample, config.coverage.variants_of(entry.key, case.dtype))
        if rule is not None:
            tested = selected_positions(config, entry, case.dtype)
            found = variant_case_of(entry, case.dtype, rule, case.sample, tested)
    if found is None:
        raise NoSuchSample(
            f"{test_id}: no such sample; regenerate the list with `ckit standard lock`"
        )
    return found
