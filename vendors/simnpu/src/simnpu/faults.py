"""Fault injection: make chosen ops misbehave the way broken accelerator stacks do.

Never on by default. ``SIMNPU_FAULTS`` holds a JSON or YAML list of rules, or ``@/path/file.yaml``
naming a file that does. A rule::

    {op: "aten::add.Tensor" | "add", kind: KIND, dtype?: "float32", noncontiguous?: bool,
     min_numel?: int, empty?: bool, min_inputs?: int, alpha?: number,
     args?: {NAME: scalar}, seconds?: float, magnitude?: float}

``op`` names one overload (``aten::add.Tensor``) or every overload of an op (``add`` or
``aten::add``). The tensor filters look at the op's tensor inputs, tensors inside list arguments
included (an op without tensor inputs, such as a factory, is judged by its outputs): ``dtype``
needs one of that dtype, ``noncontiguous: true`` needs a non-contiguous one (``false``: all
contiguous), ``min_numel`` needs one that large, ``empty: true`` needs an empty one (numel 0;
``false``: none empty), ``min_inputs`` needs at least that many tensors (the list given to
``aten::cat`` counts each of its tensors). The argument filters look at the call's scalar
arguments by schema name, positional or keyword, defaults filled in: ``args: {keepdim: true}``
needs ``keepdim`` to equal ``true``; ``alpha: 2`` is short for ``args: {alpha: 2}`` (numbers
compare by value: ``2`` matches ``2.0``; booleans only match booleans). Every matching call
fires the rule.

A collective of simnpu's process groups (``simnpu.distributed``) is named ``c10d::<name>``
(``c10d::allreduce``, ``c10d::allgather``, ``c10d::reduce_scatter``, ``c10d::alltoall``,
``c10d::broadcast``, ``c10d::send``, ``c10d::barrier``) and fires on the last rank alone, its
tensor filters reading that rank's tensors: ``abort``, ``segfault`` and ``hang`` end or stop
that rank before its collective starts, ``drop_rank`` drops its contribution (it sends zeros),
``wrong_reduce`` applies the wrong reduce op (``max`` for ``sum``, ``sum`` for any other), and
``stall`` (any of them; a receive splits as the ``c10d::send`` it matches) stops it inside the
collective: every rank exchanges the first half of its host copies over gloo, then the last rank
stalls for ever while its peers wait in gloo for the second half.

simnpu's dynamo backend (``simnpu.compile_backend``) names the compile of a graph holding an
ATen op ``compile::<op>`` (``compile::argmin``): a rule of a kind that acts before the op
computes (``hang``: a compile that never ends, ``abort``, ``slow``...) acts as it compiles such
a graph; eager calls of the op are untouched.

Kinds that compute the result and then change it (an op returning nothing, an in-place foreach
op such as ``_foreach_addcmul_``, has the tensors it writes as its results): ``wrong_small``,
``wrong_large``, ``nan``, ``dtype_change``; ``saturate`` (integer results clamp to the dtype's
min/max where the true, wrapping result overflowed: a saturating int32 add); ``write_input``
(the result is right, but the op also scribbles over its first device tensor input in place: an
out-of-place op corrupting its read-only input; nothing happens when that input is also the
op's output);
``drop_nan`` (NaN results become 0, as a max or an activation whose comparisons skip NaN);
``fresh_result`` (the right result, but in a new tensor: an in-place or ``out=`` call leaves the
tensor it should write as it was and returns another); ``tensor_dtype`` (a promoted result is
cast back to the dtype of the op's first dimensioned tensor input: a kernel ignoring the
category of a scalar or 0-dim operand, so an int tensor plus a float scalar returns int; boolean
results are left alone); ``drop_past`` (the op runs as if every input element past flat
position ``min_numel``, default 2^24, were zero: a 24-bit element
counter or index dropping the tail of a reduction, a scan or a gather); ``truncate`` (a
floating result of less precision than the op's first input is that input rounded toward zero,
not to nearest even: a truncating float32 to float16/bfloat16 conversion); ``wrong_shape``
(the right values with a leading dimension of size 1 added: a kernel that loses track of
its result's shape); ``contiguous_result`` (the right values, in the default contiguous
memory format whatever the inputs' format: a kernel that ignores channels-last inputs, as a
convolution returning NCHW for NHWC inputs). ``drop_scalar`` (the op runs with every scalar
argument it was given, ``alpha``, ``value``, at its schema default, 1: a kernel binding that
loses its scalar operand; on ``aten::addcdiv_`` it is a broken optimizer update, AdamW's
``param.addcdiv_(exp_avg, denom, value=-step_size)`` moving each parameter by the whole ratio,
the wrong way, while the out-of-place ``addcdiv`` and every forward op stay right).
``lost_update`` (an accumulating index op, ``index_add`` or ``scatter_add``, whose
read-modify-write is not atomic: where an index repeats, only the last duplicate's contribution
survives, the classic last-writer-wins race; without duplicate indices the result is right).
Kinds that act
before the op computes: ``abort``, ``segfault``, ``hang``, ``missing``, ``slow``, ``poison``
(raises a fatal device error; every later floating result in the process is garbage) and
``poison_half`` (the same error, but only float16/bfloat16 results are corrupted afterwards,
perturbed just outside their tolerance; float32 and every other dtype stay correct).
Kinds that replace the computation: ``stale`` (a kernel cache keyed on the op and its inputs'
shapes and dtypes: a call of the same shapes gets the result computed by the first such call,
whatever its values) and ``swallow_error`` (where the kernel raises, the op returns zeros shaped
like its first tensor input instead: an index out of range silently read as something).
A kind decided at import: ``fallback`` (simnpu registers no kernel of its own for the op, so
PyTorch's dispatcher leaves it to the device's boxed fallback, which computes it on the host
with CPU's kernel like PyTorch's ``cpu_fallback``: right values, no device kernel; takes no filter).
A kind of ``torch.compile`` alone: ``wrong_decomposition`` (simnpu's dynamo backend decomposes the
op wrongly, its floating results off by ``magnitude`` as ``wrong_small``; eager calls stay right;
takes no filter but ``magnitude``: ``simnpu.compile_backend``).

An op's backward is wrong while its forward stays right with any result kind on the backward
op autograd calls on the device (``aten::tanh_backward``, ``aten::sigmoid_backward``,
``aten::threshold_backward``): those are ops of their own, executed here like any other.
Kinds of training that leave every forward right: ``overwrite_grad`` (where autograd's
AccumulateGrad adds a new gradient to a leaf's ``.grad``, with ``aten::add_.Tensor`` on the
device, ``.grad`` becomes the new gradient alone: a second backward call overwrites instead of
accumulating; the op outside AccumulateGrad stays right) and ``autocast_dtype`` (under
``torch.autocast``, the op runs under the wrong policy of ``simnpu.autocast``: a lower-precision
op in float32, a float32 or promoting op in the autocast dtype; without autocast nothing
changes).
"""

from __future__ import annotations

import ctypes
import enum
import functools
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

ENV_VAR = "SIMNPU_FAULTS"


class FaultConfigError(ValueError):
    """``SIMNPU_FAULTS`` is malformed; the message is one line."""


class Kind(enum.StrEnum):
    WRONG_SMALL = "wrong_small"
    WRONG_LARGE = "wrong_large"
    NAN = "nan"
    DTYPE_CHANGE = "dtype_change"
    ABORT = "abort"
    SEGFAULT = "segfault"
    HANG = "hang"
    DROP_RANK = "drop_rank"
    WRONG_REDUCE = "wrong_reduce"
    MISSING = "missing"
    SLOW = "slow"
    POISON = "poison"
    POISON_HALF = "poison_half"
    SATURATE = "saturate"
    WRITE_INPUT = "write_input"
    FRESH_RESULT = "fresh_result"
    DROP_NAN = "drop_nan"
    TENSOR_DTYPE = "tensor_dtype"
    DROP_PAST = "drop_past"
    STALE = "stale"
    SWALLOW_ERROR = "swallow_error"
    TRUNCATE = "truncate"
    FALLBACK = "fallback"
    WRONG_SHAPE = "wrong_shape"
    OVERWRITE_GRAD = "overwrite_grad"
    AUTOCAST_DTYPE = "autocast_dtype"
    DROP_SCALAR = "drop_scalar"
    WRONG_DECOMPOSITION = "wrong_decomposition"
    STALL = "stall"
    LOST_UPDATE = "lost_update"
    CONTIGUOUS_RESULT = "contiguous_result"


#: Kinds that act before the op computes; the others rewrite its result.
BEFORE_KINDS = frozenset(
    {Kind.ABORT, Kind.SEGFAULT, Kind.HANG, Kind.MISSING, Kind.SLOW, Kind.POISON, Kind.POISON_HALF}
)

#: The dtypes ``poison_half`` corrupts.
HALF_DTYPES = frozenset({torch.float16, torch.bfloat16})

#: Default relative perturbation of ``wrong_small``: a few times the standard's widest bound for the
#: dtype (compound ops allow 8 eps of the largest value: 6% in bfloat16, 0.8% in float16),
#: so the error is small but never inside the tolerance.
SMALL_MAGNITUDE = {torch.bfloat16: 0.25, torch.float16: 4e-2}
DEFAULT_SMALL_MAGNITUDE = 1e-2
DEFAULT_LARGE_MAGNITUDE = 10.0
#: Below this absolute value, perturbations are sized as if the value were this large.
PERTURB_FLOOR = 0.1

#: What ``dtype_change`` silently returns instead.
DTYPE_SWAPS = {
    torch.float32: torch.float16,
    torch.float16: torch.float32,
    torch.bfloat16: torch.float32,
    torch.float64: torch.float32,
    torch.int64: torch.int32,
    torch.int32: torch.int64,
    torch.bool: torch.uint8,
}

RULE_FIELDS = {
    "op", "kind", "dtype", "noncontiguous", "min_numel", "empty", "min_inputs", "alpha", "args",
    "seconds", "magnitude",
}

#: A scalar argument value a rule can require (``args`` / ``alpha``).
Scalar = bool | int | float | str


@dataclass(frozen=True)
class Call:
    """What the filters judge: the tensors (inputs, or a factory's outputs) and named arguments.

    ``arguments`` maps the op's schema argument names to the call's values, defaults filled in,
    so a filter sees ``alpha`` whether it came positionally, by keyword or not at all.
    ``op_name`` is the qualified overload, for messages.
    """

    subjects: Sequence[torch.Tensor]
    arguments: Mapping[str, Any] = field(default_factory=dict)
    op_name: str = ""


def same_scalar(actual: Any, wanted: Scalar) -> bool:
    """Numbers compare by value (``2 == 2.0``), but a boolean only ever equals a boolean."""
    if isinstance(actual, torch.Tensor) and actual.dim() == 0 and not actual.is_complex():
        actual = actual.item()
    if isinstance(wanted, bool) or isinstance(actual, bool):
        return isinstance(actual, bool) and isinstance(wanted, bool) and actual == wanted
    if isinstance(wanted, str):
        return isinstance(actual, str) and actual == wanted
    return isinstance(actual, (int, float)) and actual == wanted


@dataclass(frozen=True)
class FaultRule:
    op: str
    kind: Kind
    dtype: torch.dtype | None = None
    noncontiguous: bool | None = None
    min_numel: int | None = None
    empty: bool | None = None
    min_inputs: int | None = None
    #: Required scalar argument values, by schema name (``alpha`` lands here too).
    args: tuple[tuple[str, Scalar], ...] = ()
    seconds: float = 1.0
    magnitude: float | None = None

    def matches_op(self, qualified_overload: str, qualified_packet: str) -> bool:
        return self.op in (qualified_overload, qualified_packet)

    def matches(self, call: Call) -> bool:
        return self.matches_subjects(call.subjects) and self.matches_arguments(call.arguments)

    def matches_subjects(self, subjects: Sequence[torch.Tensor]) -> bool:
        if self.dtype is not None and not any(t.dtype == self.dtype for t in subjects):
            return False
        if self.noncontiguous is not None:
            if any(not t.is_contiguous() for t in subjects) != self.noncontiguous:
                return False
        if self.min_numel is not None and not any(t.numel() >= self.min_numel for t in subjects):
            return False
        if self.empty is not None and any(t.numel() == 0 for t in subjects) != self.empty:
            return False
        if self.min_inputs is not None and len(subjects) < self.min_inputs:
            return False
        return True

    def matches_arguments(self, arguments: Mapping[str, Any]) -> bool:
        return all(
            name in arguments and same_scalar(arguments[name], value) for name, value in self.args
        )


# -- configuration ---------------------------------------------------------------------------


def _fail(message: str) -> FaultConfigError:
    return FaultConfigError(f"{ENV_VAR}: {' '.join(message.split())}")


def _parse_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - pyyaml is a dependency
        raise _fail("not valid JSON (and PyYAML is not installed to read YAML)") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" at line {where.line + 1}" if where is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise _fail(f"not valid JSON or YAML{line}: {problem}") from None


def _read_source(value: str) -> str:
    if not value.startswith("@"):
        return value
    path = Path(value[1:]).expanduser()
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise _fail(f"cannot read rules file {str(path)!r}: {exc.strerror or exc}") from None


def _canonical_op(op: str) -> str:
    """``add`` -> ``aten::add``; ``aten::mm.default`` -> ``aten::mm``."""
    qualified = op if "::" in op else f"aten::{op}"
    return qualified.removesuffix(".default")


def _dtype(value: Any, where: str) -> torch.dtype:
    dtype = getattr(torch, value, None) if isinstance(value, str) else None
    if not isinstance(dtype, torch.dtype):
        raise _fail(
            f"{where}: field dtype: expected a torch dtype name like 'float32', got {value!r}"
        )
    return dtype


def _number(rule: dict[str, Any], field: str, where: str, kind: type) -> Any:
    value = rule[field]
    ok = isinstance(value, (int, float)) if kind is float else isinstance(value, int)
    if isinstance(value, bool) or not ok or value < 0:
        expected = "a non-negative number" if kind is float else "a non-negative integer"
        raise _fail(f"{where}: field {field}: expected {expected}, got {value!r}")
    return kind(value)


def _flag(rule: dict[str, Any], field: str, where: str) -> bool | None:
    value = rule.get(field)
    if value is not None and not isinstance(value, bool):
        raise _fail(f"{where}: field {field}: expected true or false, got {value!r}")
    return value


def _scalar(value: Any, where: str) -> Scalar:
    if not isinstance(value, (bool, int, float, str)):
        raise _fail(f"{where}: expected a number, true/false or a string, got {value!r}")
    return value


def _arguments(raw: dict[str, Any], where: str) -> tuple[tuple[str, Scalar], ...]:
    """``args`` and the ``alpha`` shorthand, as sorted (name, value) pairs."""
    wanted: dict[str, Scalar] = {}
    if "args" in raw:
        args = raw["args"]
        if not isinstance(args, dict) or not args:
            raise _fail(
                f"{where}: field args: expected a mapping of argument names to scalar values "
                f"like {{alpha: 2}}, got {args!r}"
            )
        for name, value in args.items():
            if not isinstance(name, str) or not name.isidentifier():
                raise _fail(f"{where}: field args: expected argument names, got {name!r}")
            wanted[name] = _scalar(value, f"{where}: field args.{name}")
    if "alpha" in raw:
        alpha = raw["alpha"]
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
            raise _fail(f"{where}: field alpha: expected a number, got {alpha!r}")
        if "alpha" in wanted:
            raise _fail(f"{where}: field alpha: given twice (also in args)")
        wanted["alpha"] = alpha
    return tuple(sorted(wanted.items()))


def _rule(raw: Any, index: int) -> FaultRule:
    where = f"rule {index}"
    if not isinstance(raw, dict):
        raise _fail(f"{where}: expected a mapping with 'op' and 'kind', got {type(raw).__name__}")
    unknown = sorted(set(map(str, raw)) - RULE_FIELDS)
    if unknown:
        raise _fail(
            f"{where}: unknown field {unknown[0]!r} (known: {', '.join(sorted(RULE_FIELDS))})"
        )
    for required in ("op", "kind"):
        if required not in raw:
            raise _fail(f"{where}: missing required field {required!r}")
    op = raw["op"]
    if not isinstance(op, str) or not op.strip():
        raise _fail(f"{where}: field op: expected an op name like 'aten::add.Tensor', got {op!r}")
    try:
        kind = Kind(raw["kind"])
    except ValueError:
        known = ", ".join(k.value for k in Kind)
        raise _fail(f"{where}: field kind: expected one of {known}, got {raw['kind']!r}") from None
    if kind is Kind.FALLBACK and set(raw) - {"op", "kind"}:
        raise _fail(f"{where}: kind fallback takes no filter (which ops have a kernel is "
                    "decided once, when simnpu is imported)")
    if kind is Kind.WRONG_DECOMPOSITION and set(raw) - {"op", "kind", "magnitude"}:
        raise _fail(f"{where}: kind wrong_decomposition takes no filter but magnitude (the "
                    "decomposition is chosen when a graph is compiled, for every call of it)")
    return FaultRule(
        op=_canonical_op(op.strip()),
        kind=kind,
        dtype=_dtype(raw["dtype"], where) if "dtype" in raw else None,
        noncontiguous=_flag(raw, "noncontiguous", where),
        min_numel=_number(raw, "min_numel", where, int) if "min_numel" in raw else None,
        empty=_flag(raw, "empty", where),
        min_inputs=_number(raw, "min_inputs", where, int) if "min_inputs" in raw else None,
        args=_arguments(raw, where),
        seconds=_number(raw, "seconds", where, float) if "seconds" in raw else 1.0,
        magnitude=_number(raw, "magnitude", where, float) if "magnitude" in raw else None,
    )


def parse_rules(value: str | None) -> tuple[FaultRule, ...]:
    """Rules from a ``SIMNPU_FAULTS`` value; empty or unset means no faults."""
    if value is None or not value.strip():
        return ()
    document = _parse_text(_read_source(value.strip()))
    if document is None:
        return ()
    if isinstance(document, dict):
        raise _fail("expected a list of rules, got a single mapping (wrap it in [ ])")
    if not isinstance(document, list):
        raise _fail(f"expected a list of rules, got {type(document).__name__}")
    return tuple(_rule(raw, index) for index, raw in enumerate(document))


# -- process state ---------------------------------------------------------------------------

_rules: tuple[FaultRule, ...] = ()
_poisoned = False
_half_poisoned = False


def load_from_environment() -> None:
    global _rules
    _rules = parse_rules(os.environ.get(ENV_VAR))


def active_rules() -> tuple[FaultRule, ...]:
    return _rules


def is_poisoned() -> bool:
    """True once a ``poison`` rule fired: every later result in this process is garbage."""
    return _poisoned


def is_half_poisoned() -> bool:
    """True once a ``poison_half`` rule fired: later float16/bfloat16 results are corrupted."""
    return _half_poisoned


@contextmanager
def injected(rules: str | Sequence[dict[str, Any]]) -> Iterator[tuple[FaultRule, ...]]:
    """Activate rules for a block (a ``SIMNPU_FAULTS``-style string or a list of dicts)."""
    global _rules
    parsed = parse_rules(rules) if isinstance(rules, str) else parse_rules(json.dumps(list(rules)))
    saved = _rules
    _rules = parsed
    try:
        yield parsed
    finally:
        _rules = saved


# -- firing ----------------------------------------------------------------------------------


def falls_back(qualified_overload: str) -> bool:
    """Whether a ``fallback`` rule takes the op's own kernel away (read at registration)."""
    packet = qualified_overload.partition(".")[0]
    return any(rule.kind is Kind.FALLBACK and rule.matches_op(qualified_overload, packet)
               for rule in _rules)


def rules_for(func: Any) -> tuple[FaultRule, ...]:
    """The active rules naming this op (cheap: most calls see no rules at all)."""
    if not _rules:
        return ()
    packet = func._schema.name
    overload = func._overloadname
    qualified = packet if overload == "default" else f"{packet}.{overload}"
    return tuple(rule for rule in _rules if rule.matches_op(qualified, packet))


def fire_before(rules: Sequence[FaultRule], call: Call) -> None:
    """Run the pre-compute kinds (crash, hang, missing kernel, slowness, poison)."""
    for rule in rules:
        if rule.kind in BEFORE_KINDS and rule.matches(call):
            _BEFORE[rule.kind](rule, call.op_name)


def _announce(rule: FaultRule, op_name: str) -> None:
    # A crash leaves no traceback; this line tells whoever reads the log what happened.
    sys.stderr.write(f"simnpu: injected fault {rule.kind.value} in {op_name}\n")
    sys.stderr.flush()


def _abort(rule: FaultRule, op_name: str) -> None:
    _announce(rule, op_name)
    os.abort()


def _segfault(rule: FaultRule, op_name: str) -> None:
    _announce(rule, op_name)
    ctypes.string_at(0)  # reads address 0: a real SIGSEGV


def _hang(rule: FaultRule, op_name: str) -> None:
    _announce(rule, op_name)
    while True:
        time.sleep(3600)


def stall(rule: FaultRule, op_name: str) -> None:
    """Stop for ever inside a collective (``stall``, fired by ``simnpu.distributed``)."""
    _hang(rule, op_name)


def _missing(rule: FaultRule, op_name: str) -> None:
    raise NotImplementedError(f"{op_name}: kernel not implemented for 'simnpu'")


def _slow(rule: FaultRule, op_name: str) -> None:
    time.sleep(rule.seconds)


def _poison(rule: FaultRule, op_name: str) -> None:
    global _poisoned
    _poisoned = True
    raise RuntimeError(
        f"simnpu: device fatal error in {op_name} (uncorrectable memory error); every later "
        "result in this process is garbage until it restarts"
    )


def _poison_half(rule: FaultRule, op_name: str) -> None:
    global _half_poisoned
    _half_poisoned = True
    raise RuntimeError(
        f"simnpu: device fatal error in {op_name} (half-precision unit fault); every later "
        "float16/bfloat16 result in this process is corrupted until it restarts"
    )


_BEFORE: dict[Kind, Callable[[FaultRule, str], None]] = {
    Kind.ABORT: _abort,
    Kind.SEGFAULT: _segfault,
    Kind.HANG: _hang,
    Kind.MISSING: _missing,
    Kind.SLOW: _slow,
    Kind.POISON: _poison,
    Kind.POISON_HALF: _poison_half,
}


def _perturb(tensor: torch.Tensor, rule: FaultRule) -> torch.Tensor:
    large = rule.kind is Kind.WRONG_LARGE
    if tensor.dtype == torch.bool:
        return ~tensor
    if not tensor.is_floating_point():
        return tensor + (100 if large else 1)
    default = (
        DEFAULT_LARGE_MAGNITUDE
        if large
        else SMALL_MAGNITUDE.get(tensor.dtype, DEFAULT_SMALL_MAGNITUDE)
    )
    magnitude = rule.magnitude if rule.magnitude is not None else default
    # Relative error ``magnitude``, pushed away from zero; near zero, relative to PERTURB_FLOOR.
    away = torch.where(tensor < 0, -1.0, 1.0).to(tensor.dtype)
    return tensor + magnitude * away * tensor.abs().clamp_min(PERTURB_FLOOR)


def wrongly_decomposed(result: Any, rule: FaultRule) -> Any:
    """``wrong_decomposition``: each floating tensor of ``result`` off as ``wrong_small``."""
    if isinstance(result, torch.Tensor):
        return _perturb(result, rule) if result.is_floating_point() else result
    if isinstance(result, (tuple, list)):
        return type(result)(wrongly_decomposed(item, rule) for item in result)
    return result


def _with_nan(tensor: torch.Tensor, rule: FaultRule) -> torch.Tensor:
    if not tensor.is_floating_point() or tensor.numel() == 0:
        return tensor
    broken = tensor.clone()
    broken[(0,) * tensor.dim()] = float("nan")
    return broken


def _without_nan(tensor: torch.Tensor, rule: FaultRule) -> torch.Tensor:
    """NaN results become 0 (``drop_nan``): a kernel whose comparisons skip NaN."""
    if not tensor.is_floating_point():
        return tensor
    return torch.where(torch.isnan(tensor), torch.zeros_like(tensor), tensor)


def _other_dtype(tensor: torch.Tensor, rule: FaultRule) -> torch.Tensor:
    return tensor.to(DTYPE_SWAPS.get(tensor.dtype, tensor.dtype))


def _other_shape(tensor: torch.Tensor, rule: FaultRule) -> torch.Tensor:
    """``wrong_shape``: every value right, one leading dimension too many."""
    return tensor.unsqueeze(0)


def _contiguous(tensor: torch.Tensor, rule: FaultRule) -> torch.Tensor:
    """``contiguous_result``: every value right, in the default memory format."""
    return tensor.contiguous()


_AFTER: dict[Kind, Callable[[torch.Tensor, FaultRule], torch.Tensor]] = {
    Kind.DROP_NAN: _without_nan,
    Kind.WRONG_SMALL: _perturb,
    Kind.WRONG_LARGE: _perturb,
    Kind.NAN: _with_nan,
    Kind.DTYPE_CHANGE: _other_dtype,
    Kind.WRONG_SHAPE: _other_shape,
    Kind.CONTIGUOUS_RESULT: _contiguous,
}


def _rewrite_with(rule: FaultRule, tensor: torch.Tensor) -> torch.Tensor:
    return _AFTER[rule.kind](tensor, rule)


def result_rewriters(
    rules: Sequence[FaultRule], call: Call
) -> list[Callable[[torch.Tensor], torch.Tensor]]:
    """One rewrite per matching post-compute rule, applied to each tensor result in turn."""
    rewriters: list[Callable[[torch.Tensor], torch.Tensor]] = []
    for rule in rules:
        if rule.kind in _AFTER and rule.matches(call):
            rewriters.append(functools.partial(_rewrite_with, rule))
        elif rule.kind is Kind.TENSOR_DTYPE and rule.matches(call):
            rewriters.append(functools.partial(_tensor_dtype, tuple(call.subjects)))
        elif rule.kind is Kind.TRUNCATE and call.subjects and rule.matches(call):
            rewriters.append(functools.partial(truncated, call.subjects[0]))
    return rewriters


#: The bit patterns of the floats ``truncate`` steps through.
_FLOAT_BITS = {torch.float16: torch.int16, torch.bfloat16: torch.int16,
               torch.float32: torch.int32}


def truncated(source: torch.Tensor, tensor: torch.Tensor) -> torch.Tensor:
    """``truncate``: ``source`` converted to ``tensor``'s less precise float dtype rounding
    toward zero: where rounding to nearest went away from zero, the neighbour one step nearer
    zero (an overflow to infinity becomes the largest finite)."""
    narrower = (
        tensor.is_floating_point() and source.is_floating_point() and tensor.shape == source.shape
        and torch.finfo(tensor.dtype).eps > torch.finfo(source.dtype).eps
        and tensor.dtype in _FLOAT_BITS
    )
    if not narrower:
        return tensor
    wide = source.to(torch.float64)
    away = torch.isfinite(wide) & (tensor.to(torch.float64).abs() > wide.abs())
    bits = _FLOAT_BITS[tensor.dtype]
    toward_zero = (tensor.view(bits) - 1).view(tensor.dtype)
    return torch.where(away, toward_zero, tensor)


def _tensor_dtype(subjects: Sequence[torch.Tensor], tensor: torch.Tensor) -> torch.Tensor:
    """``tensor_dtype``: the result in the dtype of the first dimensioned input."""
    first = next((t for t in subjects if t.dim() > 0), None)
    if first is None or tensor.dtype in (torch.bool, first.dtype):
        return tensor
    return tensor.to(first.dtype)


#: Where ``drop_past`` cuts inputs off when its rule gives no ``min_numel``.
DEFAULT_DROP_PAST = 1 << 24


def drop_limit(rules: Sequence[FaultRule], call: Call) -> int | None:
    """The smallest cut-off of the matching ``drop_past`` rules, or None where none matches."""
    limits = [rule.min_numel or DEFAULT_DROP_PAST for rule in rules
              if rule.kind is Kind.DROP_PAST and rule.matches(call)]
    return min(limits, default=None)


def dropped_past(value: Any, limit: int) -> Any:
    """A copy of ``value`` (a tensor) with its elements past flat position ``limit`` zeroed."""
    if not isinstance(value, torch.Tensor) or value.numel() <= limit:
        return value
    flat = value.detach().reshape(-1).clone()
    flat[limit:] = 0
    return flat.reshape(value.shape)


def fires(rules: Sequence[FaultRule], kind: Kind, call: Call) -> bool:
    """Whether a rule of ``kind`` matches this call (for the kinds the executor applies)."""
    return any(rule.kind is kind and rule.matches(call) for rule in rules)


def garbage(tensor: torch.Tensor) -> torch.Tensor:
    """What a poisoned device returns: floating values scaled and shifted."""
    return tensor * 3 + 7 if tensor.is_floating_point() else tensor


def half_garbage(tensor: torch.Tensor) -> torch.Tensor:
    """What a half-poisoned device returns: float16/bfloat16 values just outside tolerance.

    Subtle on purpose (the ``wrong_small`` perturbation): a check that looks only at float32, or
    only for gross garbage, misses it.
    """
    if tensor.dtype not in HALF_DTYPES:
        return tensor
    return _perturb(tensor, FaultRule(op="", kind=Kind.WRONG_SMALL))


# -- drop_scalar -----------------------------------------------------------------------------


def scalars_dropped(
    func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The call with each scalar argument it passes (schema type ``Scalar``, shown as
    ``number``) replaced by the schema's default (``drop_scalar``)."""
    positional, named = list(args), dict(kwargs)
    for index, argument in enumerate(func._schema.arguments):
        if str(argument.type) != "number" or not argument.has_default_value():
            continue
        if index < len(positional) and not argument.kwarg_only:
            positional[index] = argument.default_value
        elif argument.name in named:
            named[argument.name] = argument.default_value
    return tuple(positional), named


# -- lost_update -----------------------------------------------------------------------------


def _argument_position(func: Any, names: Sequence[str]) -> tuple[int, str] | None:
    for position, argument in enumerate(func._schema.arguments):
        if argument.name in names:
            return position, argument.name
    return None


def _argument(args: list[Any], kwargs: dict[str, Any], where: tuple[int, str] | None) -> Any:
    if where is None:
        return None
    position, name = where
    return args[position] if position < len(args) else kwargs.get(name)


def lost_updates(
    func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The call with every contribution but the last of each repeated index zeroed
    (``lost_update``): what a racing read-modify-write leaves, the last writer winning.
    ``index_add`` (a 1-D index of whole slices) and ``scatter_add`` (an index per element)."""
    positional, named = list(args), dict(kwargs)
    dim_at = _argument_position(func, ("dim",))
    index_at = _argument_position(func, ("index",))
    source_at = _argument_position(func, ("source", "src"))
    dim, index = _argument(positional, named, dim_at), _argument(positional, named, index_at)
    source = _argument(positional, named, source_at)
    if not isinstance(index, torch.Tensor) or not isinstance(source, torch.Tensor):
        return args, kwargs
    dim = int(dim or 0) % max(1, source.dim())
    if index.dim() <= 1:  # index_add: whole slices along dim
        overwritten = _overwritten(index.reshape(-1))
        if source.dim() > 1:
            shape = [1] * source.dim()
            shape[dim] = -1
            overwritten = overwritten.view(shape).expand(source.shape)
        else:
            overwritten = overwritten.reshape(source.shape)
    else:  # scatter_add: an index per element
        overwritten = _overwritten(index.movedim(dim, 0)).movedim(0, dim)
    region = tuple(slice(0, size) for size in overwritten.shape)
    kept = source.clone()
    kept[region] = torch.where(overwritten, torch.zeros_like(kept[region]), kept[region])
    assert source_at is not None
    position, name = source_at
    if position < len(positional):
        positional[position] = kept
    else:
        named[name] = kept
    return tuple(positional), named


def _overwritten(index: torch.Tensor) -> torch.Tensor:
    """Along the first dim, whether a later entry of the same column holds the same index."""
    if index.dim() == 0 or index.shape[0] < 2:
        return torch.zeros(index.shape, dtype=torch.bool)
    same = index.unsqueeze(1) == index.unsqueeze(0)
    later = torch.ones(index.shape[0], index.shape[0], dtype=torch.bool).triu(1)
    later = later.view(*later.shape, *([1] * (index.dim() - 1)))
    return (same & later).any(dim=1)


# -- saturate --------------------------------------------------------------------------------


def _is_integer(tensor: torch.Tensor) -> bool:
    return not tensor.is_floating_point() and not tensor.is_complex() and tensor.dtype != torch.bool


def widen(value: Any) -> Any:
    """An integer tensor in a type where the op cannot overflow: int64 (int64 itself: float64).

    ``saturate`` recomputes the op on widened inputs to find where the real result wrapped.
    """
    if not isinstance(value, torch.Tensor) or not _is_integer(value):
        return value
    return value.to(torch.float64 if value.dtype == torch.int64 else torch.int64)


def saturated(result: torch.Tensor, wide: torch.Tensor) -> torch.Tensor:
    """``result`` with every element whose true value ``wide`` overflowed clamped to the range.

    For int64 the true value is judged in float64, so the bounds are compared as 2**63.
    """
    if not _is_integer(result) or wide.shape != result.shape:
        return result
    info = torch.iinfo(result.dtype)
    wide = wide.to(torch.float64)
    high = wide >= float(info.max) + 1
    low = wide < float(info.min)
    if not bool(high.any() or low.any()):
        return result
    clamped = torch.where(high, torch.full_like(result, info.max), result)
    return torch.where(low, torch.full_like(result, info.min), clamped)


# -- write_input -----------------------------------------------------------------------------


def scribble(tensor: torch.Tensor) -> None:
    """Overwrite ``tensor``'s elements in place with wrong values (``write_input``).

    Writes through the storage span the view covers, so expanded (stride 0) and strided inputs
    are corrupted too, as a kernel writing through the pointer it was given would.
    """
    if tensor.numel() == 0:
        return
    extents = zip(tensor.shape, tensor.stride(), strict=True)
    span = 1 + sum((size - 1) * stride for size, stride in extents)
    flat = torch.empty(0, dtype=tensor.dtype).set_(
        tensor.untyped_storage(), tensor.storage_offset(), (span,), (1,)
    )
    with torch.no_grad():
        if tensor.dtype == torch.bool:
            flat.logical_not_()
        elif tensor.is_floating_point():
            flat.mul_(3).add_(7)
        elif not tensor.is_complex():
            flat.add_(1)


# -- fresh_result ----------------------------------------------------------------------------


def into_fresh(result: Any, inputs: Sequence[torch.Tensor], before: Sequence[torch.Tensor]) -> Any:
    """``result`` copied into new tensors, and every input put back as it was ``before`` the
    call (``fresh_result``): what a kernel that ignores the tensor it should write returns."""
    from torch.utils._pytree import tree_map

    fresh = tree_map(lambda v: v.clone() if isinstance(v, torch.Tensor) else v, result)
    with torch.no_grad():
        for tensor, was in zip(inputs, before, strict=True):
            if tensor.shape != was.shape:
                tensor.resize_(was.shape)
            tensor.copy_(was)
    return fresh


# -- stale, swallow_error --------------------------------------------------------------------

#: ``stale``'s cache: the first result per (op, input shapes and dtypes), in this process.
_stale_results: dict[tuple[Any, ...], Any] = {}


def _copied(value: Any) -> Any:
    from torch.utils._pytree import tree_map

    return tree_map(lambda v: v.clone() if isinstance(v, torch.Tensor) else v, value)


def computed(rules: Sequence[FaultRule], call: Call, compute: Callable[[], Any]) -> Any:
    """``compute()``, or what ``stale`` / ``swallow_error`` make of it where they fire."""
    if not rules:
        return compute()
    if fires(rules, Kind.STALE, call):
        key = (call.op_name, *((tuple(t.shape), t.dtype) for t in call.subjects))
        if key not in _stale_results:
            _stale_results[key] = _copied(compute())
        return _copied(_stale_results[key])
    if fires(rules, Kind.SWALLOW_ERROR, call) and call.subjects:
        try:
            return compute()
        except (RuntimeError, IndexError, ValueError, TypeError):
            return torch.zeros_like(call.subjects[0])
    return compute()


# -- overwrite_grad, autocast_dtype (training) -----------------------------------------------


def accumulating() -> bool:
    """Whether this call runs inside autograd's AccumulateGrad (adding to a leaf's ``.grad``)."""
    node = torch._C._current_autograd_node()
    return node is not None and type(node).__name__ == "AccumulateGrad"


def gradient_rewriters(
    rules: Sequence[FaultRule], call: Call
) -> list[Callable[[torch.Tensor], torch.Tensor]]:
    """``overwrite_grad``: inside AccumulateGrad, the sum ``grad + new`` becomes ``new``."""
    if not fires(rules, Kind.OVERWRITE_GRAD, call) or not accumulating():
        return []
    return [functools.partial(_new_gradient_only, tuple(call.subjects))]


def _new_gradient_only(subjects: Sequence[torch.Tensor], tensor: torch.Tensor) -> torch.Tensor:
    new = subjects[-1] if subjects else tensor
    if new.shape != tensor.shape or new.dtype != tensor.dtype:
        return tensor
    return new.clone()
