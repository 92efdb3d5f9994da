"""The OpInfo half of the unit tier: PyTorch's own op samples, run on the vendor device.

``torch.testing._internal.common_methods_invocations.op_db`` takes seconds to import, so it is
imported only when a case runs or the test list is generated, never at collection. Samples are
generated on CPU with a seed derived from (op, dtype), so every process sees the same sample at
the same index; they are cached per (op, dtype) because a worker runs many cases of one op.

Stable ids: ``unit/opinfo/<op>/<dtype>/<sample-index>``, where ``<op>`` is the OpInfo name plus
``.<variant_test_name>`` if any, and ``<sample-index>`` is the position of the sample among
the OpInfo's CPU samples in that dtype (``op.sample_inputs_func``). At most
``max_samples_per_case`` samples per (op, dtype) are taken, spread evenly over the op's samples
(first and last included).
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from kit.errors import InputError
from kit.unit.checking import UnitCase
from kit.unit.config import OpEntry, UnitConfig
from kit.unit.seeding import seeded_rngs
from kit.unit.trees import TORCH_DTYPES, to_device, upcast_floating

PREFIX = "unit/opinfo/"


@dataclass(frozen=True)
class OpinfoCaseId:
    op_key: str
    dtype: str
    index: int

    def __str__(self) -> str:
        return f"{PREFIX}{self.op_key}/{self.dtype}/{self.index}"


def parse_opinfo_id(test_id: str) -> OpinfoCaseId:
    parts = test_id.split("/")
    if len(parts) != 5 or f"{parts[0]}/{parts[1]}/" != PREFIX or not parts[4].isdigit():
        raise InputError(f"not an OpInfo unit test id: {test_id!r} (expected {PREFIX}OP/DTYPE/N)")
    return OpinfoCaseId(parts[2], parts[3], int(parts[4]))


@functools.cache
def _op_db_index() -> Mapping[tuple[str, str], Any]:
    from torch.testing._internal.common_methods_invocations import op_db

    return {(op.name, op.variant_test_name): op for op in op_db}


def find_opinfo(entry: OpEntry) -> Any:
    return _find(entry.name, entry.variant)


def _find(name: str, variant: str) -> Any:
    op = _op_db_index().get((name, variant))
    if op is None:
        which = f"{name!r} (variant {variant!r})" if variant else repr(name)
        raise InputError(f"unit tier: no OpInfo named {which} in torch {torch.__version__}")
    return op


def sample_indices(count: int, max_samples: int) -> list[int]:
    """``max_samples`` positions spread evenly over ``count`` samples, first and last included."""
    if count <= max_samples:
        return list(range(count))
    if max_samples == 1:
        return [0]
    return sorted({round(i * (count - 1) / (max_samples - 1)) for i in range(max_samples)})


def selected_samples(entry: OpEntry, dtype: str, max_samples: int) -> Mapping[int, Any]:
    """The op's chosen samples in ``dtype`` by their index: deterministic across processes."""
    return _selected_samples(entry.name, entry.variant, dtype, max_samples)


@functools.cache
def _selected_samples(name: str, variant: str, dtype: str, max_samples: int) -> Mapping[int, Any]:
    op = _find(name, variant)
    with seeded_rngs(zlib.crc32(f"{name}.{variant}/{dtype}".encode())):
        # The sample function itself, not ``op.sample_inputs``: that wrapper reseeds the global
        # generators before every sample and inspects the stack each time (slow).
        samples = list(op.sample_inputs_func(op, "cpu", TORCH_DTYPES[dtype], requires_grad=False))
    return {i: samples[i] for i in sample_indices(len(samples), max_samples)}


def opinfo_test_ids(config: UnitConfig) -> list[str]:
    ids = []
    for entry in config.ops:
        supported = find_opinfo(entry).supported_dtypes("cpu")
        for dtype in entry.dtypes:
            if TORCH_DTYPES[dtype] not in supported:
                raise InputError(
                    f"{config.source}: op {entry.key}: OpInfo does not support {dtype} on CPU"
                )
            for index in selected_samples(entry, dtype, config.max_samples_per_case):
                ids.append(str(OpinfoCaseId(entry.key, dtype, index)))
    return ids


def opinfo_unit_case(config: UnitConfig, test_id: str) -> UnitCase:
    """The inputs and call of one OpInfo test, rebuilt identically in any process."""
    case = parse_opinfo_id(test_id)
    entry = config.op(case.op_key)
    if case.dtype not in entry.dtypes:
        raise InputError(f"{test_id}: dtype {case.dtype} is not tested for {entry.key}")
    op = find_opinfo(entry)
    sample = selected_samples(entry, case.dtype, config.max_samples_per_case).get(case.index)
    if sample is None:
        raise InputError(
            f"{test_id}: no such sample; regenerate the list with `ckit standard lock`"
        )
    arguments = ((sample.input, *sample.args), dict(sample.kwargs))

    def make_inputs(device: str, upcast: bool) -> Any:
        return to_device(upcast_floating(arguments) if upcast else arguments, device)

    def call(device: str, upcast: bool, inputs: Any) -> Any:
        args, kwargs = inputs
        return op(*args, **kwargs)

    label = f"{entry.key} sample {case.index}"
    return UnitCase(label, case.dtype, entry.comparison, make_inputs, call)
