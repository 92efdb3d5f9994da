"""The OpInfo half of the unit tier: PyTorch's own op samples and variants of them, on the device.

Stable ids: ``unit/opinfo/<op>/<dtype>/<sample>`` for an op of the unit list, and
``unit/sweep/<op>/<dtype>/<sample>`` for one of the sweep (every other OpInfo of the release,
``kit.tiers.unit.sweep``), where ``<op>`` is the OpInfo name plus ``.<variant_test_name>`` if
any, and ``<sample>`` is either

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

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from kit.errors import InputError
from kit.test_ids import TestId
from kit.tiers.unit.checking import UnitCase
from kit.tiers.unit.config import UnitConfig
from kit.tiers.unit.entries import OpEntry
from kit.tiers.unit.samples import cpu_accepts, find_opinfo, opinfo_samples, sample_case
from kit.tiers.unit.trees import TORCH_DTYPES
from kit.tiers.unit.unit_id import OPINFO_PREFIXES, OPINFO_SOURCE, SWEEP_SOURCE
from kit.tiers.unit.variants import variant_case_of, variant_samples
from kit.tiers.unit.variants.interface import rule_of_segment

PREFIX = "unit/opinfo/"
T = TypeVar("T")
#: A variant's id segment: never all digits (those are sample positions), no spaces/brackets.
VARIANT_SEGMENT = re.compile(r"[a-z][a-z0-9_-]*\Z")


@dataclass(frozen=True)
class OpinfoCaseId:
    op_key: str
    dtype: str
    #: The position among the op's OpInfo samples in ``dtype``, or a variant's name.
    sample: int | str
    #: ``opinfo`` (the unit list) or ``sweep``.
    source: str = OPINFO_SOURCE

    def __str__(self) -> str:
        return f"unit/{self.source}/{self.op_key}/{self.dtype}/{self.sample}"


def parse_opinfo_id(test_id: str) -> OpinfoCaseId:
    parsed = TestId.read(test_id, ("unit",))
    if parsed is None or len(parsed.segments) != 4 or f"{parsed.prefix(1)}/" not in OPINFO_PREFIXES:
        raise InputError(
            f"not an OpInfo unit test id: {test_id!r} (expected {PREFIX}OP/DTYPE/SAMPLE)"
        )
    source, op_key, dtype, last = parsed.segments
    if last.isdigit():
        return OpinfoCaseId(op_key, dtype, int(last), source)
    if VARIANT_SEGMENT.match(last):
        return OpinfoCaseId(op_key, dtype, last, source)
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


#: A sweep op's positions by (tier file, samples per dtype, op key, dtype): each is checked on
#: CPU once a process.
_SWEEP_POSITIONS: dict[tuple[str, int | None, str, str], tuple[int, ...]] = {}


def selected_positions(config: UnitConfig, entry: OpEntry, dtype: str) -> tuple[int, ...]:
    """The positions of the op's OpInfo samples the standard runs in ``dtype``. A sweep op's
    sample is in the standard only where the CPU reference accepts it (the unit list's ops
    were chosen where it does)."""
    if entry.source != SWEEP_SOURCE:
        return _spread(config, entry, dtype)
    key = (str(config.source), config.samples_cap(entry), entry.key, dtype)
    if key not in _SWEEP_POSITIONS:
        samples = opinfo_samples(entry, dtype)
        _SWEEP_POSITIONS[key] = tuple(i for i in _spread(config, entry, dtype) if cpu_accepts(
            sample_case(entry, dtype, samples[i], f"{entry.key} sample {i}")))
    return _SWEEP_POSITIONS[key]


def _spread(config: UnitConfig, entry: OpEntry, dtype: str) -> tuple[int, ...]:
    count = len(opinfo_samples(entry, dtype))
    cap = config.samples_cap(entry)
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
            ids += _dtype_ids(config, entry, dtype)
    for entry in config.sweep_ops:
        for dtype in entry.dtypes:
            ids += _dtype_ids(config, entry, dtype)
    return ids


def _dtype_ids(config: UnitConfig, entry: OpEntry, dtype: str) -> list[str]:
    """The op's ids in ``dtype``: its selected samples, then its variants' samples. A sweep
    op's OpInfo may hold what the kit cannot build on this release (a sample function that
    fails, a sparse result): it then has no such id, and ``ckit standard show`` counts the op
    among those without a test."""
    sweep = entry.source == SWEEP_SOURCE
    no_positions: tuple[int, ...] = ()
    tested = _built(sweep, lambda: selected_positions(config, entry, dtype), no_positions)
    ids = [str(OpinfoCaseId(entry.key, dtype, index, entry.source)) for index in tested]
    no_samples: dict[str, object] = {}
    for rule in config.variants_of(entry, dtype):
        segments = _built(sweep, functools.partial(variant_samples, entry, dtype, rule, tested),
                          no_samples)
        ids += [str(OpinfoCaseId(entry.key, dtype, segment, entry.source))
                for segment in segments]
    return ids


def _built(sweep: bool, build: Callable[[], T], nothing: T) -> T:
    """``build()``; for a sweep op, ``nothing`` where PyTorch's sample code fails."""
    if not sweep:
        return build()
    try:
        return build()
    except Exception:  # noqa: BLE001 - any failure of the release's OpInfo code
        return nothing


class NoSuchSample(InputError):
    """A locked id whose sample the installed torch's OpInfo no longer generates: a stale list
    on the standard's own release, a test not in the release on another (a canary's run,
    ``kit.tiers.unit.release_drift``)."""


def opinfo_unit_case(config: UnitConfig, test_id: str) -> UnitCase:
    """The inputs and call of one OpInfo test, rebuilt identically in any process."""
    case = parse_opinfo_id(test_id)
    if case.source == SWEEP_SOURCE and not config.sweeps(case.op_key):
        # The sweep's ops are the installed release's: on another one (a canary) an OpInfo it
        # dropped, or whose CPU dtypes changed, names no test here.
        raise NoSuchSample(f"{test_id}: the installed torch's op_db gives the sweep no such op")
    entry = config.op(case.op_key, case.source)
    if case.dtype not in entry.dtypes:
        fault = NoSuchSample if case.source == SWEEP_SOURCE else InputError
        raise fault(f"{test_id}: dtype {case.dtype} is not tested for {entry.key}")
    found: UnitCase | None = None
    if isinstance(case.sample, int):
        sample = selected_samples(config, entry, case.dtype).get(case.sample)
        if sample is not None:
            found = sample_case(entry, case.dtype, sample, f"{entry.key} sample {case.sample}")
    else:
        rule = rule_of_segment(case.sample, config.variants_of(entry, case.dtype))
        if rule is not None:
            tested = selected_positions(config, entry, case.dtype)
            found = variant_case_of(entry, case.dtype, rule, case.sample, tested)
    if found is None:
        raise NoSuchSample(
            f"{test_id}: no such sample; regenerate the list with `ckit standard lock`"
        )
    return found
