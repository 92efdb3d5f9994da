"""The one interface every tier implements; ``kit.tiers.registry`` lists the tiers.

A tier owns a family of stable test ids (``<tier>/...``): how ``ckit standard lock`` generates
them, which of them the kit decides do not apply to a vendor, whether the vendor's worker decides
a test or only executes it for the kit's judge, how the judge judges the evidence, and the pytest
suite the worker collects (the tier's package directory). Everything else (the plan, the
orchestrator, the report, the portal) asks the tier, never a hand-kept list of names.

A tier object is light to import: its heavy parts (OpInfo, model sources, flows) are imported
inside the methods that need them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from kit.test_ids import TestId

if TYPE_CHECKING:
    from kit.json_shape import RecordDetails
    from kit.judge_context import JudgeContext
    from kit.outcomes import Inapplicable
    from kit.standard import Standard
    from kit.vendors import VendorProfile


class Tier(ABC):
    #: The tier's name: the first segment of its test ids and its key in ``standard.yaml``.
    name: ClassVar[str]
    #: False for a tier that checks the device itself, so it runs even where the device is
    #: unusable (the others are skipped with the device's problem then).
    needs_device: ClassVar[bool] = True
    #: Whether a complete run covers the tier (and ``ckit run`` runs it by default).
    in_complete_run: ClassVar[bool] = True
    #: For ids that name an op and dtype, the segments before ``<family>/<op>/<dtype>``
    #: (``unit/opinfo/add/float32/0``: 1); None where ids name no op.
    op_offset: ClassVar[int | None] = None

    @property
    def suite_dir(self) -> Path:
        """The pytest suite a worker collects: the tier's package directory."""
        return Path(__file__).resolve().parent / self.name

    def judged_apart(self, test_id: str) -> bool:
        """Whether the kit's judge decides ``test_id`` (the worker only executes it)."""
        return True

    @abstractmethod
    def generate_ids(self, standard: Standard) -> list[str]:
        """Every test id of the tier under ``standard`` (``ckit standard lock``; may be slow)."""

    def input_digests(self, standard: Standard, test_ids: list[str]) -> dict[str, str]:
        """Per id, the digest of the inputs it names (locked beside the id); empty when the
        tier's ids name no generated inputs."""
        return {}

    def locked_files(self, standard: Standard, test_ids: list[str]) -> dict[str, str]:
        """Facts of the tier locked beside its list, decided in the kit's process so that no
        vendor's process computes them: per file (a path relative to a standard directory), the
        text ``ckit standard lock`` writes there and ``--check`` requires; empty for most."""
        return {}

    #: Whether ``unfailable_ids`` checks the tier's tests (``ckit standard lock --check``).
    checks_failability: ClassVar[bool] = False

    def unfailable_ids(self, standard: Standard, test_ids: list[str]) -> list[str]:
        """The tests that could not fail (an all-zero result would pass them)."""
        return []

    def inapplicable(
        self, standard: Standard, vendor: VendorProfile, test_id: str
    ) -> Inapplicable | None:
        """Why ``test_id`` does not apply to ``vendor`` (the kit's decision), or None."""
        return None

    def absent_from_release(self, standard: Standard, test_id: str) -> Inapplicable | None:
        """Why ``test_id``, which did not pass, names nothing the installed torch generates,
        where ``standard`` was locked on another release (a canary's run: the kit's own
        decision, rebuilt in the kit's process; ``kit.tiers.unit.release_drift``); else None."""
        return None

    #: Modules running and judging the tier's tests imports (seconds, for OpInfo's database or
    #: transformers), none of them the vendor's, none touching a device: ``warm_up`` imports
    #: them, and the run's fork server before any worker starts (``kit.runner.fork_server``).
    preloads: tuple[str, ...] = ()

    def warm_up(self) -> None:
        """Make ready what running and judging the tier's tests needs: a worker does it before
        announcing itself, a judge while the worker starts, so no test's time holds it. The
        preloads, for most tiers."""
        import importlib

        for module in self.preloads:
            importlib.import_module(module)

    @abstractmethod
    def judge(self, context: JudgeContext, test_id: str, evidence: Any) -> RecordDetails:
        """The details of a passing test from a worker's evidence; raises for any other verdict
        (``context``: the standard, and the golden writer of a ``--golden`` run)."""

    def failure_details(self, standard: Standard, test_id: str, vendor: str) -> RecordDetails:
        """What a failing record adds to its details (how to reproduce it, say)."""
        return {}

    def blame_dtype(self, test_id: str) -> str | None:
        """The dtype whose failing OpInfo tests a failing ``test_id`` may fail through
        (``kit.grading.blame``): it calls those ops on the device in that dtype. None where
        the tier blames nothing for it (a primitive itself, or a flow off the device)."""
        return None

    def primitives(self, standard: Standard, test_id: str) -> tuple[str, ...]:
        """The ATen ops ``test_id`` calls, traced on CPU in first-call order (blame); only
        asked where ``blame_dtype`` names a dtype."""
        return ()

    def op_and_dtype(self, test_id: str) -> tuple[str, str] | None:
        """The op and dtype ``test_id`` names, or None where the tier's ids name none."""
        parsed = self._op_test_id(test_id)
        if parsed is None or self.op_offset is None:
            return None
        return parsed.segments[self.op_offset], parsed.segments[self.op_offset + 1]

    def op_group(self, test_id: str) -> str | None:
        """``unit/opinfo/add`` for ``unit/opinfo/add/float32/0``: the id up to the op."""
        parsed = self._op_test_id(test_id)
        if parsed is None or self.op_offset is None:
            return None
        return parsed.prefix(self.op_offset + 1)

    def _op_test_id(self, test_id: str) -> TestId | None:
        """``test_id`` parsed when it is this tier's and long enough to name an op and dtype."""
        if self.op_offset is None:
            return None
        parsed = TestId.read(test_id, (self.name,))
        if parsed is None or len(parsed.segments) < self.op_offset + 3:
            return None
        return parsed
