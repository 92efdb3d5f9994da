"""Core ATen coverage: which ops of the release's core opset a run's device calls reached, and how.

The core opset is the release's overloads tagged ``torch.Tag.core`` (``kit.attribution.op_names``
lists them once per torch version, in an isolated child), what an export backend must implement;
the run's side is ``summary.attribution`` (``kit.report.attribution_summary``: per op, in how many
tests it ran natively, decomposed or through the fallback). Derived when read, never stored:
report.json's summary has no such key (a released standard's schema allows none), so every view
asks ``Summary.core_aten`` for the one value. Known only where the report's torch release is the
installed one (another release's opset is not this interpreter's to know).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypedDict

from kit.attribution.dispatch import Where
from kit.attribution.op_names import release_core_ops
from kit.report.attribution_summary import AttributionTotals

#: Where an exercised core op is said to have run when its tests disagree, the first found
#: first: one test through the fallback means the device did not always run it itself, and an op
#: with a kernel of its own is native wherever it ran so.
_PRECEDENCE = (Where.FALLBACK, Where.NATIVE, Where.DECOMPOSED)


class CoreAtenJson(TypedDict):
    release: str
    #: Whether the release's core opset is known here (its torch installed).
    known: bool
    core_ops: int
    exercised: int
    native: int
    decomposed: int
    fallback: int
    #: Each core op: where it ran (``native``, ``decomposed``, ``fallback``), or None.
    ops: dict[str, str | None]


@dataclass(frozen=True)
class CoreAtenCoverage:
    """Per core ATen op of ``release``: where the run's device calls ran it, or None where none
    reached it. ``known`` is False where the release's opset is not known here (``ops`` empty)."""

    release: str
    known: bool
    ops: Mapping[str, Where | None]

    def count(self, where: Where) -> int:
        return sum(place is where for place in self.ops.values())

    @property
    def exercised(self) -> int:
        return sum(place is not None for place in self.ops.values())

    def unexercised(self) -> tuple[str, ...]:
        return tuple(op for op, place in self.ops.items() if place is None)

    def text(self) -> str:
        """``core ATen ops (torch 2.13.0): 72/193 exercised, 60 native, ...``: one line."""
        if not self.known:
            return (f"core ATen ops (torch {self.release}): not known here (another torch "
                    "release is installed)")
        return (f"core ATen ops (torch {self.release}): {self.exercised}/{len(self.ops)} "
                f"exercised, {self.count(Where.NATIVE)} native, "
                f"{self.count(Where.DECOMPOSED)} decomposed, "
                f"{self.count(Where.FALLBACK)} through the fallback")

    def to_json(self) -> CoreAtenJson:
        return {
            "release": self.release,
            "known": self.known,
            "core_ops": len(self.ops),
            "exercised": self.exercised,
            "native": self.count(Where.NATIVE),
            "decomposed": self.count(Where.DECOMPOSED),
            "fallback": self.count(Where.FALLBACK),
            "ops": {op: None if place is None else place.value for op, place in self.ops.items()},
        }


def core_aten_coverage(attribution: AttributionTotals | None,
                       release: str) -> CoreAtenCoverage | None:
    """The coverage of ``release``'s core opset by a run's ``summary.attribution``; None where
    the run recorded no attribution (a v1 standard, a run without unit tests)."""
    if attribution is None:
        return None
    core_ops = release_core_ops(release)
    if core_ops is None:
        return CoreAtenCoverage(release, known=False, ops={})
    return CoreAtenCoverage(release, known=True, ops={
        op: _place(attribution.ops.get(op, {})) for op in sorted(core_ops)})


def _place(counts: Mapping[str, int]) -> Where | None:
    """Where one op ran over the run's tests (``_PRECEDENCE``), None where it never ran on the
    device."""
    return next((where for where in _PRECEDENCE if counts.get(where.value, 0)), None)
