"""Content checks on a report read with ``Report.from_json``: does what it claims hold up?

A valid signature proves who wrote a report, not that it is true: the signer holds the key and
can sign anything. These checks judge the claims against what the verifier knows itself (the
standards, the released-kit list, its clock). ``ckit verify`` runs them as numbered steps; any
other reader of reports (an audit) can run the same functions. Each failing check raises
``ReportError`` with one line.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kit.attribution.dispatch import dispatch_places
from kit.attribution.op_names import release_op_names
from kit.errors import InputError
from kit.grading.released import ReleasedKit
from kit.report.attribution_summary import dispatch_op_names
from kit.report.model import Report, ReportError, RunInfo
from kit.results import DISPATCH_KEY
from kit.standard import Standard, load_standard

#: No ckit run happened before the kit existed: its first standard (v1) dates from 2026.
KIT_EPOCH = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
#: How far the run machine's clock may run ahead of the verifier's.
CLOCK_SKEW = dt.timedelta(minutes=10)
#: ``run.today`` is UTC's date (``kit.clock.utc_today``), but older kits judged on the machine's
#: local date while the run's times are UTC: a day either side is the same moment somewhere.
TODAY_SLACK = dt.timedelta(days=1)


@dataclass(frozen=True)
class KitStanding:
    """Whether the kit that judged the run is a released one, and what to tell the reader."""

    released: bool
    #: One line for the reader when the results are not comparable with released-kit results.
    note: str | None


def report_standard(report: Report) -> Standard:
    """The standard the report names, loaded; it must certify the torch release it claims."""
    version = report.standard.version
    try:
        standard = load_standard(version)
    except (InputError, OSError, KeyError, TypeError, ValueError) as exc:
        raise ReportError(f"standard {version} of this kit cannot be loaded: {exc}") from None
    if standard.torch_release != report.standard.torch_release:
        raise ReportError(
            f"report says standard {version} certifies torch "
            f"{report.standard.torch_release!r}; it certifies {standard.torch_release}"
        )
    return standard


def kit_standing(report: Report, released_kits: Iterable[ReleasedKit]) -> KitStanding:
    """A report claiming a released kit must name a listed digest, of that version."""
    kit = report.kit
    listed = {released.digest: released for released in released_kits}
    if not kit.released and _listed_as(listed, kit.digest, kit.version):
        # Released since the run: the list given says so, and a reader's acceptance check
        # (released-kit) judges by that list, so the note must not say otherwise.
        return KitStanding(
            released=False,
            note=(f"kit {kit.version} was not yet released when it ran; its digest "
                  f"{kit.digest[:16]} is released kit {kit.version}'s in the released-kit list"),
        )
    if not kit.released:
        return KitStanding(
            released=False,
            note=(
                f"not a released kit (kit {kit.version}, digest {kit.digest[:16]}): its results "
                "are not comparable with released-kit results"
            ),
        )
    release = listed.get(kit.digest)
    if release is None:
        raise ReportError(
            f"report claims a released kit, but digest {kit.digest[:16]} is not in the "
            "released-kit list (standards/released-kits.yaml)"
        )
    if release.version != kit.version:
        raise ReportError(
            f"digest {kit.digest[:16]} is released kit {release.version}, but the report "
            f"names kit {kit.version!r}"
        )
    return KitStanding(released=True, note=None)


def _listed_as(listed: Mapping[str, ReleasedKit], digest: str, version: str) -> bool:
    release = listed.get(digest)
    return release is not None and release.version == version


def check_run_times(run: RunInfo, now: dt.datetime) -> None:
    """The run's times are in order, within the kit's lifetime, and not after ``now``.

    The statement carries no signing time, but signing happens before verification: a run that
    starts or ends after ``now`` was signed before it started or ended.
    """
    started, finished = run.started_at, run.finished_at
    if finished < started:
        raise ReportError(f"the run finished ({finished}) before it started ({started})")
    if started < KIT_EPOCH:
        raise ReportError(f"the run started {started}, before ckit existed ({KIT_EPOCH.date()})")
    if started > now + CLOCK_SKEW:
        raise ReportError(
            f"the run started {started}, after this verification ({now:%Y-%m-%d %H:%M:%S%z}): "
            "it was signed before it started"
        )
    if finished > now + CLOCK_SKEW:
        raise ReportError(
            f"the run finished {finished}, after this verification ({now:%Y-%m-%d %H:%M:%S%z}): "
            "it was signed before it finished"
        )
    _check_today(run)


def _check_today(run: RunInfo) -> None:
    # Skip expiry is judged on run.today: a date moved back revives expired skips.
    earliest = (run.started_at - TODAY_SLACK).date()
    latest = (run.finished_at + TODAY_SLACK).date()
    if not earliest <= run.today <= latest:
        raise ReportError(
            f"skip expiry was judged on {run.today}, outside the run "
            f"({run.started_at.date()} to {run.finished_at.date()})"
        )


def check_op_names(report: Report) -> None:
    """Every op a record's ``details.dispatch`` names is an operator of the report's torch
    release: the list is written in the vendor's process, so one made up is refused. Checked
    where the installed torch is that release (another's operators are not known here)."""
    if not any(DISPATCH_KEY in record.details for record in report.read_records):
        return  # a v1 report, or a v2 one without attribution: no torch asked
    release = report.standard.torch_release
    operators = release_op_names(release)
    if operators is None:
        return  # another release than the installed torch's: its operators are not known here
    # Every name at once (in C); which test named one is asked only of a refused report.
    unknown = operators.unknown(dispatch_op_names(report.read_records,
                                                  report.gathered_dispatches))
    if unknown:
        named_by = _dispatch_op_names(report)
        raise ReportError(
            f"op names: {named_by[unknown[0]]}'s details.dispatch names {unknown[0]!r}, not an "
            f"operator of torch {release}" + (f" (and {len(unknown) - 1} more)"
                                               if len(unknown) > 1 else "")
            + ": attribution names only the release's operators"
        )


def _dispatch_op_names(report: Report) -> dict[str, str]:
    """Each op name the records' ``details.dispatch`` give, with the first test naming it."""
    named_by: dict[str, str] = {}
    for record in report.read_records:
        places = dispatch_places(record.details.get(DISPATCH_KEY))
        for names in (places or {}).values():
            for name in names:
                named_by.setdefault(name, record.id)
    return named_by
