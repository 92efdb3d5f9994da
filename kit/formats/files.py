"""Writing every report format into the run's output directory."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kit.errors import InputError
from kit.formats.csv_format import CsvFormat
from kit.formats.interface import ReportFormat
from kit.formats.json_format import JsonFormat
from kit.formats.junit import JunitFormat
from kit.formats.markdown import MarkdownFormat
from kit.outfiles import write_new_file
from kit.report.body import write_body_files
from kit.rundir import REPORT_JSON, declare_report_file, finished_report_names
from kit.standard import BODY_FORMAT, load_standard


def declared_format(report: Mapping[str, Any]) -> str:
    """The report format the standard a built report names declares."""
    return load_standard(str(report["standard"]["version"])).report_format


# In the order of ``kit.rundir.report_files()``, which names their files for signing.
_FORMATS: list[ReportFormat] = [JsonFormat(), JunitFormat(), CsvFormat(), MarkdownFormat()]


def formats() -> tuple[ReportFormat, ...]:
    """Every report format a run writes, in the order written."""
    return tuple(_FORMATS)


def register_format(fmt: ReportFormat) -> None:
    """Add a report format: every run writes its file, and signing makes it a subject.

    ``ValueError`` when its file name is taken (by another format or the run directory).
    """
    declare_report_file(fmt.filename)
    _FORMATS.append(fmt)


#: How many reports' renderings ``render_derived`` keeps (a whole run's are about 6 MB): a
#: process that audits a repository's reports in turn, then again (a gate, then a portal), finds
#: a release's handful kept.
_KEPT_RENDERINGS = 8
#: (sha256 of report.json's bytes, the formats' files) -> what the bytes render, the most
#: recently used last.
_renderings: OrderedDict[tuple[str, tuple[str, ...]], dict[str, bytes]] = OrderedDict()
_renderings_lock = threading.Lock()


def render_derived(report_json: bytes) -> dict[str, bytes]:
    """File name -> bytes of every format but report.json, rendered from ``report_json``'s
    bytes read back (``kit.formats.derived`` checks a run's files against them).

    The same bytes always render the same files, and one process often checks one report
    more than once (a submit verifies it, then pre-checks it as the audit will; a gate audits
    what a portal shows): the last few renderings are kept, by the bytes' sha256 and the
    formats registered when they were rendered."""
    key = (hashlib.sha256(report_json).hexdigest(), tuple(fmt.filename for fmt in formats()))
    with _renderings_lock:
        kept = _renderings.get(key)
        if kept is not None:
            _renderings.move_to_end(key)
            return dict(kept)
    rendered = derived_of(json.loads(report_json))
    with _renderings_lock:
        _renderings[key] = rendered
        while len(_renderings) > _KEPT_RENDERINGS:
            _renderings.popitem(last=False)
    return dict(rendered)


def derived_of(report: Mapping[str, Any]) -> dict[str, bytes]:
    """File name -> bytes of every format but report.json, rendered from the document
    report.json's bytes parse to (``render_derived``, or a verifier's parse of them)."""
    return {fmt.filename: fmt.render(report) for fmt in formats() if fmt.filename != REPORT_JSON}


def render_files(report: Mapping[str, Any]) -> dict[str, bytes]:
    """Every format's bytes for a built ``report``: report.json, then the others rendered from
    those very bytes, so whoever holds report.json regenerates them byte for byte."""
    report_json = next(f for f in formats() if f.filename == REPORT_JSON).render(report)
    derived = render_derived(report_json)
    return {fmt.filename: derived.get(fmt.filename, report_json) for fmt in formats()}


def write_report_files(report: Mapping[str, Any], out_dir: Path) -> dict[str, Path]:
    """Write every format, or the body where the report's standard declares the ``body``
    format (``kit.report.body``: its derived files are rendered on demand); returns file
    name -> path.

    Nothing is written while any report file (or a link by that name) is there already, so
    another run's report is never overwritten nor mixed with this one's; and all formats render
    before any file is written, so a schema violation leaves no half report.
    """
    out_dir = Path(out_dir)
    # Before the report is read at all: a planted file or link refuses whatever is written.
    present = [name for name in finished_report_names() if os.path.lexists(out_dir / name)]
    if present:
        raise InputError(
            f"{out_dir} already holds {', '.join(present)}; the kit never overwrites a report"
        )
    if declared_format(report) == BODY_FORMAT:
        return write_body_files(report, out_dir)
    rendered = render_files(report)
    out_dir.mkdir(parents=True, exist_ok=True)
    return {name: write_new_file(out_dir / name, data) for name, data in rendered.items()}
