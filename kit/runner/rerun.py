"""``ckit run --rerun-failed DIR``: run again only the tests a previous run did not pass.

The tests are those its report counts as failed: failing records, and tests without an accepted
result (missing, or skipped / not applicable for no reason the kit accepts). The rerun selects
them by their exact ids, so it is a narrowed run and grades like one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kit.errors import InputError
from kit.patterns import select_ids
from kit.report.failing import failing_tests
from kit.report.read import LoadedReport, read_report
from kit.results import tier_of
from kit.rundir import PreviousRun
from kit.test_ids import tiers_with_tests
from kit.tiers.registry import tier_names

_GLOB = frozenset("*?")


@dataclass(frozen=True)
class Rerun:
    previous: PreviousRun
    vendor: str
    tiers: tuple[str, ...]
    #: The exact ids to run (locked ids hold no glob character, so each matches itself only).
    test_ids: tuple[str, ...]


def _narrowed(ids: list[str], tiers: tuple[str, ...] | None, select: tuple[str, ...]) -> list[str]:
    if tiers is not None:
        ids = [t for t in ids if tier_of(t) in tiers]
    return select_ids(ids, select)


def rerun_of(source: LoadedReport, tiers: tuple[str, ...] | None,
             select: tuple[str, ...]) -> Rerun:
    """The rerun of ``source``'s failures, narrowed further by ``tiers`` and ``select``."""
    # A locked id holds no glob character; an id that does (a report's say-so) is no test of
    # the standard, and as a --select pattern it would widen the rerun.
    failing = sorted(t for t in failing_tests(source.report) if not set(t) & _GLOB)
    ids = _narrowed(failing, tiers, select)
    if not ids:
        raise InputError(f"{source.path}: no test to rerun: every test of that run (within "
                         "--tier/--select) passed or was skipped")
    previous = PreviousRun(dir=str(source.path.parent.resolve()), report_sha256=source.sha256)
    ran_tiers = tiers_with_tests(tier_names(), ids)
    return Rerun(previous, source.report.vendor_id, ran_tiers, tuple(ids))


def load_rerun(previous_dir: Path, tiers: tuple[str, ...] | None,
               select: tuple[str, ...]) -> Rerun:
    if not previous_dir.is_dir():
        raise InputError(f"{previous_dir}: not a directory; --rerun-failed takes a run's "
                         "output directory")
    return rerun_of(read_report(previous_dir), tiers, select)
