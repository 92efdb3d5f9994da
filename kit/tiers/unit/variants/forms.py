"""``method``, ``inplace``, ``inplacestrided``, ``out`` and ``outresize``: the op called the
other ways users call it.

OpInfo declares, besides an op's function, its method (``x.add(y)``), its in-place variant
(``x.add_(y)``) and whether it takes ``out=``. A device that implements each form by its own
kernel can be right in one and wrong in another, so each form runs once per op and dtype, on
the largest tested sample CPU accepts in that form (in place, many samples promote or broadcast
beyond their input). Besides the values, facts the values cannot show are compared with CPU's
(``kit.tiers.unit.checking.Fact``):

- in place: the call returns the very tensor it updates and changes it (``not-in-place``), and
  that tensor holds the result (compared as an input the op updates); ``inplacestrided``
  updates a transposed tensor with gaps between its elements, as a view of a larger one is;
- ``out=``: the call returns its ``out`` tensor (``out-not-returned``), ``out`` keeps the
  storage it was given when it had the right size (``out-reallocated``; vacuous for an ``out``
  of no element), and ``out`` has CPU's strides where they address elements (``wrong-strides``:
  dimensions of size 1 and zero-element results ignored, as PyTorch's own
  ``check_significant_strides``); ``outresize`` gives an empty ``out``, which PyTorch resizes.
"""

from __future__ import annotations

import functools
from abc import abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any, ClassVar, cast

import torch

from kit.tiers.unit.checking import Fact, UnitCase
from kit.tiers.unit.entries import OpEntry
from kit.tiers.unit.samples import (
    call_arguments,
    find_opinfo,
    place_exact,
    transform_tensors,
)
from kit.tiers.unit.trees import FLOATING_TO_UPCAST, clone, map_tensors
from kit.tiers.unit.variants.interface import (
    Candidate,
    VariantKind,
    VariantSource,
    tested_largest_first,
)
from kit.tiers.unit.variants.noncontiguous import scattered

#: The most tensor elements a form's sample may hold: forms repeat samples the tier runs.
MAX_NUMEL = 1 << 12
#: Where an in-place op's updated tensor and an ``out=`` tensor sit among a case's inputs.
SELF = "args[0]"
OUT = "kwargs['out']"

Arguments = tuple[tuple[Any, ...], dict[str, object]]


class _Form(VariantKind):
    """A way of calling the op; its candidates are the op's tested samples, largest first."""

    def candidates(self, source: VariantSource) -> Iterator[Candidate]:
        opinfo = find_opinfo(source.entry)
        if not self.declared(opinfo):
            return
        for sample in tested_largest_first(source, MAX_NUMEL):
            yield functools.partial(self.usable, opinfo, sample)

    @abstractmethod
    def declared(self, opinfo: Any) -> bool:
        """Whether OpInfo declares this form of the op."""

    def usable(self, opinfo: Any, sample: Any) -> Any:
        """``sample`` if this form can run it (CPU's acceptance is checked apart), else None."""
        return sample


class Method(_Form):
    name = "method"
    summary = "the op called as a Tensor method, x.op(...)"

    def declared(self, opinfo: Any) -> bool:
        return opinfo.method_variant is not None

    def case(self, entry: OpEntry, dtype: str, sample: Any, label: str) -> UnitCase:
        method = find_opinfo(entry).method_variant
        return form_case(entry, dtype, sample, label, lambda args, kwargs: method(*args, **kwargs))


class Inplace(_Form):
    name = "inplace"
    summary = "the op's in-place variant, x.op_(...): it must update x and return it"

    def declared(self, opinfo: Any) -> bool:
        return opinfo.inplace_variant is not None

    def usable(self, opinfo: Any, sample: Any) -> Any:
        return sample if isinstance(sample.input, torch.Tensor) else None

    def case(self, entry: OpEntry, dtype: str, sample: Any, label: str) -> UnitCase:
        inplace = find_opinfo(entry).inplace_variant
        written = Written()

        def call(args: tuple[Any, ...], kwargs: dict[str, object]) -> Any:
            written.remember(args[0])
            return inplace(*args, **kwargs)

        def observe(inputs: Arguments, result: Any) -> tuple[Fact, ...]:
            updated = inputs[0][0]
            return (Fact("the call returns the tensor it updates", "not-in-place",
                         result is updated),
                    Fact("the call changed the tensor it updates", "not-in-place",
                         written.changed(updated)))

        return form_case(entry, dtype, sample, label, call, observe=observe, mutates=(SELF,))


class InplaceStrided(Inplace):
    name = "inplacestrided"
    summary = "the in-place variant updating a transposed tensor with gaps between its elements"

    def usable(self, opinfo: Any, sample: Any) -> Any:
        if not isinstance(sample.input, torch.Tensor) or sample.input.dim() == 0:
            return None
        made = transform_tensors(sample, lambda t: t.clone())
        made.input = scattered(sample.input)
        return made


class Out(_Form):
    name = "out"
    summary = "the op writing into an out= tensor of the result's size, which it must return"
    #: Whether ``out`` is given empty (PyTorch resizes it) instead of at the result's size.
    resized: ClassVar[bool] = False

    def declared(self, opinfo: Any) -> bool:
        return bool(opinfo.supports_out)

    def usable(self, opinfo: Any, sample: Any) -> Any:
        return sample if isinstance(_cpu_result(opinfo, sample), torch.Tensor) else None

    def case(self, entry: OpEntry, dtype: str, sample: Any, label: str) -> UnitCase:
        op = find_opinfo(entry)
        like = _cpu_result(op, sample)
        shape = (0,) if self.resized else tuple(like.shape)
        written = Written()

        def with_out(arguments: Arguments, device: str, upcast: bool) -> Arguments:
            wide = upcast and like.dtype in FLOATING_TO_UPCAST
            out = torch.zeros(shape, dtype=torch.float64 if wide else like.dtype, device=device)
            written.remember(out)
            return arguments[0], {**arguments[1], "out": out}

        def observe(inputs: Arguments, result: Any) -> tuple[Fact, ...]:
            out = cast(torch.Tensor, inputs[1]["out"])  # the tensor ``with_out`` put there
            facts = [Fact("the call returns its out tensor", "out-not-returned", result is out),
                     Fact("the out tensor's shape", "out-not-written", tuple(out.shape)),
                     Fact("the call changed its out tensor", "out-not-written",
                          written.changed(out))]
            if not self.resized:  # where a resize moves the storage is the device's to decide
                facts.append(Fact("the out tensor keeps the storage it was given",
                                  "out-reallocated", written.same_storage(out)))
            facts.append(Fact("the out tensor's strides (of dimensions longer than 1; none "
                              "when it is empty)", "wrong-strides", significant_strides(out)))
            return tuple(facts)

        return form_case(entry, dtype, sample, label, lambda args, kwargs: op(*args, **kwargs),
                          prepare=with_out, observe=observe, mutates=(OUT,))


class OutResized(Out):
    name = "outresize"
    summary = "the op given an empty out= tensor, which it must resize, write and return"
    resized = True


class Written:
    """What a tensor the call must write held before it (kept per tensor, in this process)."""

    def __init__(self) -> None:
        self._before: dict[int, tuple[torch.Tensor, int]] = {}

    def remember(self, tensor: torch.Tensor) -> None:
        self._before[id(tensor)] = (tensor.detach().clone(), tensor.data_ptr())

    def changed(self, tensor: torch.Tensor) -> bool:
        """Whether ``tensor`` differs from what it held, bytes compared (NaN payloads too)."""
        was, _ = self._before[id(tensor)]
        if was.shape != tensor.shape or was.numel() == 0:
            return was.shape != tensor.shape
        flat = [t.detach().contiguous().reshape(-1).view(torch.uint8) for t in (was, tensor)]
        return not torch.equal(flat[0], flat[1])

    def same_storage(self, tensor: torch.Tensor) -> bool:
        """Whether ``tensor`` still addresses the memory it was given; vacuously so when it
        addresses none (a zero-element tensor's pointer is any allocator's choice)."""
        was, pointer = self._before[id(tensor)]
        if was.numel() == 0 or tensor.numel() == 0:
            return True
        return tensor.data_ptr() == pointer


def significant_strides(tensor: torch.Tensor) -> tuple[int | None, ...]:
    """The strides that address elements, as PyTorch's own stride comparison reads them
    (``torch._prims_common.check_significant_strides``): None for a dimension of size 1, which
    never steps, and nothing at all for a zero-element tensor, which addresses no element
    (PyTorch calls ``(0, 3)`` contiguous with strides ``(3, 1)`` and ``(1, 0)`` alike)."""
    if tensor.numel() == 0:
        return ()
    return tuple(stride if size > 1 else None
                 for size, stride in zip(tensor.shape, tensor.stride(), strict=True))


#: The op's CPU result per sample (by identity: samples are built once per process and kept).
_CPU_RESULTS: dict[int, Any] = {}


def _cpu_result(opinfo: Any, sample: Any) -> Any:
    """The op's result on CPU for ``sample`` in its own dtype (None where CPU refuses it): what
    an ``out=`` tensor must hold."""
    if id(sample) not in _CPU_RESULTS:
        # On copies: an op that updates an input (batch norm's running statistics) would
        # otherwise change the kept sample, and with it the inputs its ids name.
        args, kwargs = clone(call_arguments(sample))
        try:
            with torch.no_grad():
                _CPU_RESULTS[id(sample)] = opinfo(*args, **kwargs)
        except Exception:  # noqa: BLE001 - CPU refuses the sample: the form cannot use it
            _CPU_RESULTS[id(sample)] = None
    return _CPU_RESULTS[id(sample)]


def form_case(
    entry: OpEntry,
    dtype: str,
    sample: Any,
    label: str,
    call: Callable[[tuple[Any, ...], dict[str, object]], Any],
    *,
    prepare: Callable[[Arguments, str, bool], Arguments] | None = None,
    observe: Callable[[Arguments, Any], tuple[Fact, ...]] | None = None,
    mutates: tuple[str, ...] = (),
) -> UnitCase:
    """A unit case calling ``call`` on the sample's arguments, placed exactly as built."""
    arguments = call_arguments(sample)

    def make_inputs(device: str, upcast: bool) -> Any:
        placed = map_tensors(arguments, lambda t: place_exact(t, device, upcast))
        return placed if prepare is None else prepare(placed, device, upcast)

    comparison = replace(entry.comparison, mutates=(*entry.comparison.mutates, *mutates))
    return UnitCase(label, dtype, comparison, make_inputs,
                    lambda device, upcast, inputs: call(*inputs), observe=observe, op=entry.name)
