"""Running one unit case: the device result against a CPU reference, under the standard's rules.

A case builds fresh inputs on a device (floating inputs widened to float64 when ``upcast``) and
calls the code under test on them. The check:

1. CPU in the tested dtype gives the dtypes the device must return (and, for ``same-dtype``
   ops, the reference values);
2. CPU with floating inputs upcast to float64 gives the reference values (``float64`` ops);
3. where the case observes facts of the call its values cannot show (is the result a view of
   the input, is the ``out=`` tensor the one written: ``UnitCase.observe``), the device's must
   equal CPU's, each a ``SemanticMismatch`` named by its ``failure`` when not;
4. the device call must leave its inputs unchanged (an out-of-place op that writes into an
   input is wrong even when its own result is right, and the damage would be blamed on
   whatever reads that tensor next);
5. the device result must have those dtypes and lie within the standard's error model bound
   (``kit.numerics.criteria.ErrorBound``) of the reference, judged per output dtype; the
   figures are recorded for passing tests too.

A case whose CPU call draws random numbers (dropout with ``p > 0``: the standard's locked
``RANDOM_DRAWS`` file lists it, ``kit.tiers.unit.random_draws`` decided it at lock time) has no
values to compare, since the device draws its own: where the standard says so
(``coverage.random``), it ends NOT_APPLICABLE (``draws-random-numbers``) once its result's
structure, dtypes and shapes held, before any repeat or value is judged.

Errors raised by the device call propagate untouched, so the plugin can classify them (a
``NotImplementedError`` is UNSUPPORTED); an error from a CPU reference is an ERROR: the kit's
curation is wrong (or the vendor's modules changed how CPU behaves).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import torch

from kit.attribution.recorder import DispatchLog, recording
from kit.context import KitContext
from kit.numerics.accumulation import accumulation_length
from kit.numerics.comparison import Measurement, NamedParts, paired_tensors
from kit.numerics.criteria import ErrorBound
from kit.numerics.judging import assert_close
from kit.outcomes import (
    KitOutcome,
    NumericMismatch,
    ResultMismatch,
    SemanticMismatch,
    ValuesNotCompared,
    numerics_details,
)
from kit.results import NotApplicableReason
from kit.standard import Standard, load_standard
from kit.tiers.unit.centring import uncentred_magnitude
from kit.tiers.unit.duplicates import details_of, judged
from kit.tiers.unit.entries import FLOAT64_REFERENCE, Comparison
from kit.tiers.unit.evidence import UnitEvidence
from kit.tiers.unit.repeat import (
    Repeat,
    assert_not_stale,
    assert_repeatable,
    call_on_other_values,
    other_values,
    repeat_evidence,
)
from kit.tiers.unit.trees import (
    assert_same_dtypes,
    map_tensors,
    numel_of,
    select_outputs,
    tensor_leaves,
    to_cpu,
)

#: Dtypes whose inputs a float64 reference widens (float64 itself is its own reference).
WIDENED_DTYPES = frozenset({"float32", "bfloat16", "float16"})


@dataclass(frozen=True)
class Fact:
    """Something about a call that its values cannot show, compared exactly with CPU's."""

    #: What it says, for messages: ``the result shares the input's storage``.
    name: str
    #: ``details.failure`` when the device's differs from CPU's: ``not-a-view``.
    failure: str
    #: A plain value (bool, int, str, tuples of them): it travels in the evidence file.
    value: Any


#: ``(inputs, result) -> facts``, taken on the device right after the call (and on CPU).
Observer = Callable[[Any, Any], tuple[Fact, ...]]


@dataclass(frozen=True)
class UnitCase:
    """One unit test's inputs and call, rebuilt identically on any device."""

    label: str
    dtype: str
    comparison: Comparison
    #: ``(device, upcast) -> inputs``: a fresh copy of the inputs on ``device`` every time.
    make_inputs: Callable[[str, bool], Any]
    #: ``(device, upcast, inputs) -> result``.
    call: Callable[[str, bool, Any], Any]
    #: Extra tensors the op accumulates over besides its inputs (a module's parameters).
    extra_operands: Any = ()
    #: For a module op: ``(module, inputs) -> result`` on a module the caller holds (the flows
    #: tier registers it in the exported subject; ``call`` copies and moves it, which export
    #: cannot trace).
    call_module: Callable[[Any, Any], Any] | None = None
    #: Facts of the call compared before any value (None: values only).
    observe: Observer | None = None
    #: Whether CPU's own result in the tested dtype decides wherever it, or the float64
    #: reference, is NaN or an infinity (inputs holding special values: what PyTorch gives
    #: for them in that dtype is the semantics, e.g. ``nan_to_num``'s largest finite value).
    specials_from_cpu: bool = False
    #: Whether the device calls again, after other values of the same shapes
    #: (``kit.tiers.unit.repeat``; None: once).
    repeat: Repeat | None = None
    #: False for a case whose call is no computation to repeat (an error input's).
    repeatable: bool = True
    #: The ATen packets the case calls by name (OpInfo's ``aten_name``): one that is
    #: CompositeImplicitAutograd never reaches the backend, so attribution lists it as
    #: decomposed (``kit.attribution.decomposed_of``).
    aten_ops: tuple[str, ...] = ()
    #: Input paths by the parameter they fill (``args[1]``: ``running_mean``), from the op's
    #: signature: how a judged input the op updates is named in a failure.
    input_names: Mapping[str, str] = field(default_factory=dict)
    #: The OpInfo op it calls (``OpEntry.name``; empty for an op spec): what a ``centred``
    #: class's bound reads its statistics by (``kit.tiers.unit.centring``).
    op: str = ""


class ReferenceFailure(KitOutcome, RuntimeError):
    """The CPU reference itself failed: normally a bug in the kit's curation.

    A ``KitOutcome`` so that its status stays ERROR even when the wrapped message happens to
    read like "not implemented for" (which would otherwise mean UNSUPPORTED).
    """


class InputModified(ResultMismatch):
    """An out-of-place op wrote into one of its inputs."""


def check_case(ckit: KitContext, case: UnitCase) -> list[Measurement]:
    """Execute on the device and judge, in this process (plain pytest)."""
    # The references first: a reference that fails is the kit's ERROR, whatever the device does.
    references = cpu_references(case)
    actual = execute_case(ckit.device, case)
    measurements = judge_case(ckit.standard, case, actual, references)
    ckit.notes.update(numerics_details(measurements))
    ckit.notes.update(details_of(case.comparison.duplicates))
    return measurements


def execute_case(
    device: str, case: UnitCase, dispatch: DispatchLog | None = None
) -> UnitEvidence:
    """The vendor half: the result and the inputs after the call from the device, on CPU, the
    facts the case observes on the device (only where it observes any), then the repeated
    calls' results (only where it repeats: ``kit.tiers.unit.repeat``).

    With ``dispatch``, the ops of the judged call are recorded into it (``kit.attribution``),
    those of an interrupted call too."""
    with torch.no_grad():
        other = None
        if case.repeat is not None:
            other = call_on_other_values(device, case.make_inputs, case.call)
        device_inputs = case.make_inputs(device, False)
        with recording(dispatch) if dispatch is not None else nullcontext():
            result = case.call(device, False, device_inputs)
        # On CPU before any observation: an observer may write through the result.
        on_cpu = to_cpu(result), to_cpu(device_inputs)
        facts = None
        if case.observe is not None:
            # Plain name -> value pairs: the evidence file holds no kit classes, and what each
            # fact means (its failure) is the judge's to say, from its own CPU observation.
            facts = {fact.name: fact.value for fact in case.observe(device_inputs, result)}
        repeated = None
        if case.repeat is not None:
            again = to_cpu(case.call(device, False, case.make_inputs(device, False)))
            repeated = repeat_evidence(again, other)
        return UnitEvidence(*on_cpu, facts, repeated)


def judge_case(
    standard: Standard,
    case: UnitCase,
    evidence: UnitEvidence,
    references: References | None = None,
    *,
    draws_random: bool = False,
) -> list[Measurement]:
    """The kit half: CPU references (``cpu_references``, computed here unless given), facts,
    random draws (``draws_random``: the call draws random numbers and the standard's
    ``coverage.random`` compares no such values), inputs unchanged, dtypes, then the numerics
    bound."""
    with torch.no_grad():
        references = references or cpu_references(case)
        expected_like, reference = references.same_dtype, references.reference
        cpu_inputs = case.make_inputs("cpu", False)
    if (evidence.facts is None) != (case.observe is None) or (
            evidence.repeated is None) != (case.repeat is None):
        raise ResultMismatch("the device evidence is not (result, inputs after the call"
                             + (", facts" if case.observe else "")
                             + (", repeated calls)" if case.repeat else ")"))
    repeated = evidence.repeated
    if case.observe is not None:
        assert_same_facts(evidence.facts, cpu_facts(case))
    actual = (evidence.result, evidence.inputs)
    if draws_random:
        assert_inputs_unchanged(actual[1], cpu_inputs, allowed=case.comparison.mutates)
        _values_not_compared(actual, expected_like, case.comparison)
    if case.repeat is not None:
        assert_repeatable(case.repeat, actual[0], repeated, case.comparison.compare_outputs)
    mutated = case.comparison.mutates
    assert_inputs_unchanged(actual[1], cpu_inputs, allowed=mutated)
    device_result, cpu_result = actual[0], expected_like[0]
    actual, expected_like, reference = (
        compared_part(outcome, case.comparison, case.input_names)
        for outcome in (actual, expected_like, reference)
    )
    assert_same_dtypes(actual, expected_like)
    bound = case_bound(standard, case, cpu_inputs, numel_of(actual))
    duplicates = case.comparison.duplicates
    try:
        if duplicates is not None:
            return judged(duplicates, cpu_inputs, actual, reference,
                          lambda got, wanted: assert_close(got, wanted, bound))
        return assert_close(actual, reference, bound)
    except (NumericMismatch, ResultMismatch):
        if case.repeat is not None:
            assert_not_stale(device_result, repeated, cpu_result,
                             lambda: _other_values_on_cpu(case),
                             case.comparison.compare_outputs)
        raise


def compared_part(outcome: tuple[Any, Any], comparison: Comparison,
                  input_names: Mapping[str, str] | None = None) -> Any:
    """The judged part of ``(result, inputs after the call)``: the picked outputs, then the
    inputs the op is declared to update (batch norm's running statistics), each measured under
    its parameter's name where ``input_names`` knows it (``running_mean (args[1])``)."""
    result, inputs = outcome
    picked = select_outputs(result, comparison.compare_outputs)
    if not comparison.mutates:
        return picked
    leaves = dict(tensor_leaves(inputs))
    names = input_names or {}
    parts = NamedParts(output=picked)
    # A sample may pass None where others pass a tensor (no running statistics): skip it.
    for where in comparison.mutates:
        if where in leaves:
            parts[f"{names[where]} ({where})" if where in names else where] = leaves[where]
    return parts


def _values_not_compared(actual: Any, expected_like: Any, comparison: Comparison) -> None:
    """End a case whose CPU call drew random numbers (its inputs already found unchanged):
    NOT_APPLICABLE once the result's structure, dtypes and shapes are CPU's (each a
    FAIL_SEMANTIC otherwise)."""
    device, cpu = (compared_part(outcome, comparison) for outcome in (actual, expected_like))
    assert_same_dtypes(device, cpu)
    for _ in paired_tensors(device, cpu):
        pass  # raises where the structure or a shape differs
    raise ValuesNotCompared(
        NotApplicableReason.DRAWS_RANDOM_NUMBERS,
        "the call draws random numbers (CPU's drew from its generator): the device draws its "
        "own, so its values are not compared; its structure, dtypes and shapes are CPU's",
    )


@dataclass(frozen=True)
class References:
    """What a case's device result is judged against, computed on CPU."""

    #: ``(result, inputs after the call)`` in the tested dtype: the dtypes the device must return.
    same_dtype: tuple[Any, Any]
    #: The same, for the reference the values are judged against (float64 where widened).
    reference: tuple[Any, Any]


def cpu_references(case: UnitCase) -> References:
    """The case's ``References``."""
    expected_like = _reference(case, upcast=False)
    if case.comparison.reference == FLOAT64_REFERENCE and case.dtype in WIDENED_DTYPES:
        reference = _reference(case, upcast=True)
        if case.specials_from_cpu:
            reference = _specials_from(expected_like, reference)
        return References(expected_like, reference)
    return References(expected_like, expected_like)


def _specials_from(same_dtype: Any, reference: Any) -> Any:
    """``reference`` with CPU's tested-dtype values wherever either is NaN or an infinity."""
    if isinstance(reference, torch.Tensor) and isinstance(same_dtype, torch.Tensor):
        if not reference.is_floating_point() or reference.shape != same_dtype.shape:
            return reference
        cpu = same_dtype.to(reference.dtype)
        both_finite = torch.isfinite(reference) & torch.isfinite(cpu)
        return torch.where(both_finite, reference, cpu)
    if isinstance(reference, (list, tuple)) and isinstance(same_dtype, (list, tuple)):
        merged = [_specials_from(s, r) for s, r in zip(same_dtype, reference, strict=False)]
        return type(reference)(merged) if isinstance(reference, list) else tuple(merged)
    if isinstance(reference, Mapping) and isinstance(same_dtype, Mapping):
        return {k: _specials_from(same_dtype[k], v) if k in same_dtype else v
                for k, v in reference.items()}
    return reference


def case_bound(
    standard: Standard, case: UnitCase, cpu_inputs: Any, output_numel: int
) -> ErrorBound:
    """The standard's bound for ``case``: its op class, overrides, accumulation length and,
    where the class asks for them, the magnitude reference and the uncentred terms."""
    op_class = case.comparison.op_class
    return ErrorBound(
        rules=standard.numerics,
        op_class=op_class,
        overrides=case.comparison.overrides,
        length=accumulation_length((cpu_inputs, case.extra_operands), output_numel),
        magnitude=magnitude_reference(case) if standard.numerics.uses_magnitude(op_class) else 0.0,
        uncentred=(uncentred_magnitude(case.op, case.make_inputs("cpu", True))
                   if standard.numerics.is_centred(op_class) else 0.0),
        widening=case.comparison.widening,
        scale_floor=case.comparison.scale_floor,
    )


def unit_bound(op_class: str | None, length: int = 1, standard: Standard | None = None
               ) -> ErrorBound:
    """The bound the unit tier applies to an op of ``op_class`` with no overrides, accumulating
    ``length`` terms (default standard: the kit's); for a vendor's own kernel tests."""
    return ErrorBound((standard or load_standard()).numerics, op_class, {}, length)


def magnitude_reference(case: UnitCase) -> float:
    """``max |op(|x|)|``: the op in float64 on the absolute values of its floating inputs.

    The size of the terms an op rounds on the way to a result that may cancel (a weighted mean,
    a loss). Taken over the op's compared results only: an input it updates (a weight
    renormalized in place) keeps its own scale. 0 when the op cannot run on ``|x|`` (the bound
    then falls back to ``max |ref|``).
    """

    def absolute(tensor: torch.Tensor) -> torch.Tensor:
        return tensor.abs() if tensor.is_floating_point() else tensor

    try:
        with torch.no_grad():
            inputs = map_tensors(case.make_inputs("cpu", True), absolute)
            result = to_cpu(case.call("cpu", True, inputs))
    except Exception:  # noqa: BLE001 - e.g. an op whose domain excludes |x|: no magnitude
        return 0.0
    picked = select_outputs(result, case.comparison.compare_outputs)
    sizes = [
        float(finite.abs().max())
        for _, leaf in tensor_leaves(picked)
        if leaf.is_floating_point() and (finite := leaf[torch.isfinite(leaf)]).numel()
    ]
    return max(sizes, default=0.0)


def cpu_facts(case: UnitCase) -> tuple[Fact, ...]:
    """The facts the case observes of its call on CPU, in the tested dtype."""
    assert case.observe is not None
    with torch.no_grad():
        inputs = case.make_inputs("cpu", False)
        return case.observe(inputs, case.call("cpu", False, inputs))


def assert_same_facts(device: Any, cpu: tuple[Fact, ...]) -> None:
    """Each of CPU's facts holds on the device too, in CPU's order (the first differing one is
    the failure)."""
    found = device if isinstance(device, Mapping) else {}
    for expected in cpu:
        if expected.name not in found or found[expected.name] != expected.value:
            seen = repr(found[expected.name]) if expected.name in found else "not observed"
            raise SemanticMismatch(
                f"{expected.name}: {seen} on the device, {expected.value!r} on CPU",
                failure=expected.failure,
            )


def assert_inputs_unchanged(
    after: Any, before: Any, allowed: tuple[str, ...] = ()
) -> None:
    """Every input tensor still holds its bytes (NaN payloads included), except those the op
    is declared to update."""
    for (where, was), (_, now) in zip(tensor_leaves(before), tensor_leaves(after), strict=True):
        if where in allowed:
            continue
        if was.shape != now.shape or was.dtype != now.dtype or not _same_bytes(was, now):
            raise InputModified(
                f"input {where} was modified by the call: an out-of-place op must not write "
                "into its inputs",
                failure="input-modified",
                input=where,
            )


def _same_bytes(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.numel() == 0:
        return True
    bytes_a = a.contiguous().reshape(-1).view(torch.uint8)
    bytes_b = b.contiguous().reshape(-1).view(torch.uint8)
    return torch.equal(bytes_a, bytes_b)


def _other_values_on_cpu(case: UnitCase) -> Any:
    """CPU's answer, in the tested dtype, to the other values a repeating case calls first."""
    with torch.no_grad():
        return to_cpu(case.call("cpu", False, other_values(case.make_inputs("cpu", False))))


def _reference(case: UnitCase, *, upcast: bool) -> tuple[Any, Any]:
    """``(result, inputs after the call)`` on CPU."""
    try:
        inputs = case.make_inputs("cpu", upcast)
        return to_cpu(case.call("cpu", upcast, inputs)), inputs
    except Exception as exc:  # any failure of the reference is the kit's problem
        kind = "float64 reference" if upcast else "same-dtype CPU run"
        first_line = (str(exc).strip().splitlines() or [""])[0]
        raise ReferenceFailure(
            f"the {kind} of {case.label} failed on CPU ({type(exc).__name__}: {first_line}): "
            "a bug in the unit tier's curation, or vendor modules that changed CPU behaviour"
        ) from exc
