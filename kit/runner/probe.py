"""A device health probe run in the worker after a test fails.

Some device failures poison the process (later results are garbage, perhaps only in one dtype).
Probing after a failure stops the damage spreading: an unhealthy worker is replaced before it
runs another test. The probe has to be fair both ways:

- it checks every floating and integer dtype the vendor claims, because corruption can be
  limited to one precision (a float32-only probe never sees a broken half-precision unit);
- it never uses the op under suspicion, nor ops that already failed in this run: a kernel that
  is simply wrong for every input says nothing about the device's state, and probing with it
  would condemn (and restart) every worker after every failing test.

Each check is a tiny computation whose exact result every correct device produces (small
integers, exactly representable in every dtype down to int8 and bfloat16), compared bit for bit
with CPU. The report names each (op, dtype) that was wrong.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kit.tiers.unit.unit_id import OPINFO_SOURCE, SWEEP_SOURCE, UnitId

if TYPE_CHECKING:
    import torch

#: Stop reading a probe's findings after this many (the message stays one readable line).
_SHOWN_FINDINGS = 3

#: Small exactly-representable operands: values 0..3 and 1..4; every result below stays <= 48.
_X = [[0, 1, 2, 3], [1, 2, 3, 0], [2, 3, 0, 1], [3, 0, 1, 2]]
_Y = [[1, 2, 3, 4], [4, 1, 2, 3], [3, 4, 1, 2], [2, 3, 4, 1]]


@dataclass(frozen=True)
class ProbeOp:
    """One known-simple op of the probe, and the names that put it under suspicion."""

    name: str
    #: Words of a test's op name that implicate this op (``matmul`` implicates ``mm``).
    aliases: frozenset[str]
    compute: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    floating_only: bool = False


def _add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x + y


def _mul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x * y


def _neg(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return -y


def _sum(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x.sum(dim=0)


def _mm(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    import torch

    return torch.mm(x, y)


def _cat(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    import torch

    return torch.cat([x, y])


#: The pool, in checking order. Matrix products only for floating dtypes (integer matmul is an
#: optional feature; a device that lacks it raises NotImplementedError, which skips the check).
PROBE_OPS: tuple[ProbeOp, ...] = (
    ProbeOp("add", frozenset({"add"}), _add),
    ProbeOp("mul", frozenset({"mul"}), _mul),
    ProbeOp("neg", frozenset({"neg"}), _neg),
    ProbeOp("sum", frozenset({"sum"}), _sum),
    ProbeOp("mm", frozenset({"mm", "matmul", "bmm", "addmm", "linear"}), _mm, floating_only=True),
    ProbeOp("cat", frozenset({"cat"}), _cat),
)
PROBE_OP_NAMES = frozenset(op.name for op in PROBE_OPS)


@dataclass(frozen=True)
class ProbeFinding:
    """One check that went wrong: ``problem`` says how (wrong values, dtype, an exception)."""

    op: str
    dtype: str
    problem: str
    #: The check raised, hung or killed the worker: the worker's state is suspect afterwards.
    fatal: bool = False

    def describe(self) -> str:
        return f"{self.op}/{self.dtype} {self.problem}"


@dataclass(frozen=True)
class ProbeReport:
    findings: tuple[ProbeFinding, ...] = ()
    #: How many (op, dtype) checks ran and compared.
    checked: int = 0
    #: Pool ops left out because a failure implicates them.
    avoided: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def wrong_ops(self) -> frozenset[str]:
        return frozenset(finding.op for finding in self.findings if finding.op in PROBE_OP_NAMES)

    @property
    def fatal(self) -> bool:
        return any(finding.fatal for finding in self.findings)

    @property
    def message(self) -> str:
        if self.ok:
            avoided = f", avoiding {', '.join(self.avoided)}" if self.avoided else ""
            return f"healthy ({self.checked} checks{avoided})"
        shown = "; ".join(f.describe() for f in self.findings[:_SHOWN_FINDINGS])
        more = len(self.findings) - _SHOWN_FINDINGS
        return shown + (f" (+{more} more)" if more > 0 else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "message": self.message,
            "checked": self.checked,
            "avoided": list(self.avoided),
            "findings": [
                {"op": f.op, "dtype": f.dtype, "problem": f.problem, "fatal": f.fatal}
                for f in self.findings
            ],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProbeReport:
        findings = tuple(
            ProbeFinding(str(f["op"]), str(f["dtype"]), str(f["problem"]), bool(f.get("fatal")))
            for f in data.get("findings", [])
        )
        return cls(findings, int(data.get("checked", 0)), tuple(data.get("avoided", [])))


def suspect_of(test_id: str) -> str | None:
    """The op a failing test puts under suspicion: ``unit/opinfo/<op>/<dtype>/<n>`` (or
    ``unit/sweep/...``) gives the OpInfo name, ``unit/opspec/<template>/<dtype>/<case>`` the
    template; other tiers none."""
    unit_id = UnitId.read(test_id)
    named = (OPINFO_SOURCE, SWEEP_SOURCE, "opspec")
    return unit_id.op if unit_id is not None and unit_id.source in named else None


def implicated(suspects: Iterable[str]) -> frozenset[str]:
    """The pool ops a set of suspect names rules out.

    A name implicates a pool op when one of its words (split at ``.`` and ``_``) is the op or
    an alias: ``add`` and ``add_broadcast_both`` implicate ``add``, ``nn.functional.linear``
    and ``matmul_layouts`` implicate ``mm``; ``addcmul`` and ``cumsum`` implicate nothing.
    """
    words = {word for name in suspects for word in re.split(r"[._]", name)}
    return frozenset(op.name for op in PROBE_OPS if op.aliases & words)


def probe_dtypes(claimed: Iterable[str]) -> list[torch.dtype]:
    """The claimed floating and integer dtypes (not bool, not complex), in claim order."""
    import torch

    chosen: list[torch.dtype] = []
    for name in claimed:
        dtype = getattr(torch, name, None)
        if not isinstance(dtype, torch.dtype) or dtype in chosen:
            continue
        if dtype.is_complex or dtype == torch.bool:
            continue
        chosen.append(dtype)
    return chosen


def _reference(op: ProbeOp, dtype: torch.dtype) -> torch.Tensor | None:
    """CPU's answer, or None where CPU itself lacks the op for this dtype (no check then)."""
    import torch

    try:
        return op.compute(torch.tensor(_X, dtype=dtype), torch.tensor(_Y, dtype=dtype))
    except (RuntimeError, NotImplementedError, TypeError):
        return None


def _raised(op: str, dtype: str, exc: Exception) -> ProbeFinding:
    problem = f"raised {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
    return ProbeFinding(op, dtype, problem, fatal=True)


def _on_device(op: ProbeOp, dtype: torch.dtype, device: str) -> torch.Tensor | ProbeFinding | None:
    """The device's answer; a finding when it raised; None for an honest gap (not implemented).

    An upload that raises is blamed on the transfer (``to``), not on the op.
    """
    import torch

    dtype_name = str(dtype).removeprefix("torch.")
    try:
        # Fresh operands per check: an op that scribbles over its inputs cannot spoil the next.
        x = torch.tensor(_X, dtype=dtype).to(device)
        y = torch.tensor(_Y, dtype=dtype).to(device)
    except NotImplementedError:
        return None
    except Exception as exc:  # a fatal device error
        return _raised("to", dtype_name, exc)
    try:
        return op.compute(x, y).cpu()
    except NotImplementedError:
        return None
    except Exception as exc:  # a fatal device error
        return _raised(op.name, dtype_name, exc)


def _compare(actual: torch.Tensor, expected: torch.Tensor) -> str | None:
    import torch

    if actual.dtype != expected.dtype:
        return f"returned {actual.dtype} instead of {expected.dtype}"
    if actual.shape != expected.shape:
        return f"returned shape {tuple(actual.shape)} instead of {tuple(expected.shape)}"
    if not torch.equal(actual, expected):
        return "differs from CPU"
    return None


def probe_device_health(
    device: str,
    claimed_dtypes: Iterable[str] = ("float32",),
    suspects: Collection[str] = (),
    on_check: Callable[[str, str], None] | None = None,
) -> ProbeReport:
    """Check every pool op not implicated by ``suspects`` in every claimed dtype.

    A check that raises NotImplementedError is an honest gap, not ill health: it is skipped.
    Any other exception ends the probe: after a fatal device error later results prove nothing
    (and are likely wrong), so only the first is reported. ``on_check(op, dtype)`` is called
    before each check, so a worker that dies mid-probe can be blamed on the check it was in.
    """
    avoided = implicated(suspects)
    dtypes = probe_dtypes(claimed_dtypes)
    findings: list[ProbeFinding] = []
    checked = 0
    for dtype in dtypes:
        dtype_name = str(dtype).removeprefix("torch.")
        for op in PROBE_OPS:
            if op.name in avoided or (op.floating_only and not dtype.is_floating_point):
                continue
            expected = _reference(op, dtype)
            if expected is None:
                continue
            if on_check is not None:
                on_check(op.name, dtype_name)
            actual = _on_device(op, dtype, device)
            if actual is None:
                continue
            if isinstance(actual, ProbeFinding):  # after a fatal error later checks prove nothing
                findings.append(actual)
                return ProbeReport(tuple(findings), checked, tuple(sorted(avoided)))
            checked += 1
            mismatch = _compare(actual, expected)
            if mismatch is not None:
                findings.append(ProbeFinding(op.name, dtype_name, mismatch))
    return ProbeReport(tuple(findings), checked, tuple(sorted(avoided)))
