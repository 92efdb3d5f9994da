"""``error``: where CPU refuses an input, the device must refuse it too (error parity).

OpInfo's ``error_inputs_func`` gives, per op, inputs PyTorch must reject (an index out of
range, mismatched shapes) with the error type and message it expects. A device that returns a
value instead (an out-of-range index clamped or read from whatever memory lies there) computes
garbage where every user expects an exception. Each such input is a sample ``error-<n>`` (``n``:
its position among the op's error inputs), kept where CPU raises the declared type with the
declared message, the input holds a tensor (it reaches the device), each of a dtype the tier
tests (not complex, which a device need not hold), but no ``out=`` tensor, and nothing in it,
its message included, names a device (a CUDA-only or a cross-device error).

Any exception from the device passes: the type and message are PyTorch's front end, which
devices legitimately word differently (a CUDA index error is a device-side assert raised as
``RuntimeError``). Returning a value fails as ``SemanticMismatch(failure="no-error")``; a crash
stays a CRASH.

An error input OpInfo gives for CPU alone (absent when it is asked for another device: an index
out of range, which CUDA refuses with an asynchronous device-side assert that ends the
process's use of the device) is NOT_APPLICABLE on any other device (``cpu-only-error-input``):
on an H200 those were ERRORs of PyTorch's own CUDA backend, each costing a new worker.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch

from kit.tiers.unit.checking import Fact, UnitCase
from kit.tiers.unit.entries import SAME_DTYPE_REFERENCE, Comparison, OpEntry
from kit.tiers.unit.samples import find_opinfo, sample_case, tensors_of
from kit.tiers.unit.trees import TORCH_DTYPES
from kit.tiers.unit.variants.interface import (
    LABEL_SEPARATOR,
    Candidate,
    VariantKind,
    VariantSource,
)

#: A message naming a device: the error is not the op's own on every device.
DEVICE_WORDS = re.compile(r"cuda|cpu|device|mps|xla|meta|hip|gpu", re.IGNORECASE)
FAILURE = "no-error"
TESTED_DTYPES = frozenset(TORCH_DTYPES.values())
RAISES = "the call raises an error"


class Errors(VariantKind):
    name = "error"
    summary = "error-<n>: OpInfo's error inputs the device must refuse as CPU does"

    def build(self, source: VariantSource, accepts: Callable[[Any], bool]) -> dict[str, object]:
        """Every device-agnostic error input CPU rejects as declared, by its position."""
        op = find_opinfo(source.entry)
        if op.error_inputs_func is None:
            return {}
        inputs = source.seeded(lambda: list(op.error_inputs_func(op, "cpu")), "all")
        return {
            f"{source.rule.name}{LABEL_SEPARATOR}{number}": error.sample_input
            for number, error in enumerate(inputs)
            if device_agnostic(error) and cpu_rejects(op, error)
        }

    def candidates(self, source: VariantSource) -> Iterator[Candidate]:
        return iter(())  # ``build`` reads OpInfo's error inputs instead

    def case(self, entry: OpEntry, dtype: str, sample: Any, label: str) -> UnitCase:
        """The op called on the error input: the result is whether it raised (a bool tensor),
        observed as a fact before any value."""
        plain = sample_case(entry, dtype, sample, label, exact_layout=True)

        def call(device: str, upcast: bool, inputs: Any) -> torch.Tensor:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    plain.call(device, upcast, inputs)
                except Exception:  # noqa: BLE001 - any refusal is parity (module docstring)
                    return torch.tensor(True)
            return torch.tensor(False)

        def observe(inputs: Any, raised: Any) -> tuple[Fact, ...]:
            return (Fact(RAISES, FAILURE, bool(raised)),)

        # Whether it raised, in the tested dtype: widened inputs may lose the error (a float16
        # source added into a float32 tensor).
        comparison = Comparison(reference=SAME_DTYPE_REFERENCE, op_class=plain.comparison.op_class)
        return UnitCase(label, dtype, comparison, plain.make_inputs, call,
                        observe=observe, repeatable=False, op=plain.op)


def cpu_only_positions(op: Any) -> frozenset[int]:
    """Positions of the op's error inputs that OpInfo gives for CPU but not for another device
    (asked for ``meta``, which every torch has): matched by error, message and the shapes of
    what the input holds (a device's preferred dtype may differ: multinomial's)."""
    key = (op.name, op.variant_test_name)
    if key not in _CPU_ONLY:
        _CPU_ONLY[key] = _cpu_only_positions(op)
    return _CPU_ONLY[key]


#: ``cpu_only_positions`` by OpInfo (name, variant): OpInfos are not hashable.
_CPU_ONLY: dict[tuple[str, str], frozenset[int]] = {}


def _cpu_only_positions(op: Any) -> frozenset[int]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        elsewhere = {_shape_key(error) for error in op.error_inputs_func(op, "meta")}
        on_cpu = list(op.error_inputs_func(op, "cpu"))
    return frozenset(n for n, error in enumerate(on_cpu) if _shape_key(error) not in elsewhere)


def _shape_key(error: Any) -> tuple[Any, ...]:
    sample = error.sample_input
    return (error.error_type.__name__, str(error.error_regex), _shapes(sample.input),
            _shapes(sample.args), _shapes(sorted(sample.kwargs.items())))


def _shapes(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape))
    if isinstance(value, (list, tuple)):
        return tuple(_shapes(item) for item in value)
    if isinstance(value, torch.device):
        return "device"
    return repr(value)


def device_agnostic(error: Any) -> bool:
    """The input holds a tensor, every one of a dtype the tier tests (a device need not hold a
    complex one), no ``out=`` tensor (what an op leaves in it on the way to an error is
    unspecified), and neither it nor the expected message names a device."""
    sample = error.sample_input
    tensors = tensors_of(sample)
    if not tensors or "out" in sample.kwargs:
        return False
    if any(tensor.dtype not in TESTED_DTYPES for tensor in tensors):
        return False
    words = [str(error.error_regex), *map(repr, (*sample.args, *sample.kwargs.values()))]
    return not any(DEVICE_WORDS.search(word) for word in words)


def cpu_rejects(op: Any, error: Any) -> bool:
    """CPU raises the declared error type with the declared message."""
    sample = error.sample_input
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            op(sample.input, *sample.args, **sample.kwargs)
        except Exception as exc:  # noqa: BLE001 - judged against the declaration below
            return isinstance(exc, error.error_type) and re.search(
                str(error.error_regex), str(exc)) is not None
    return False
