"""Writing every report format into the run's output directory."""

from __future__ import annotations

import os
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
from kit.signing.sign import ENVELOPE_NAME

FORMATS: tuple[ReportFormat, ...] = (JsonFormat(), JunitFormat(), CsvFormat(), MarkdownFormat())
#: Every file a finished run leaves beside its journal: the formats and the envelope over them.
RUN_REPORT_NAMES: tuple[str, ...] = (*(fmt.filename for fmt in FORMATS), ENVELOPE_NAME)


def write_report_files(report: Mapping[str, Any], out_dir: Path) -> dict[str, Path]:
    """Write every format; returns file name -> path.

    Nothing is written while any report file (or a link by that name) is there already, so
    another run's report is never overwritten nor mixed with this one's; and all formats render
    before any file is written, so a schema violation leaves no half report.
    """
    out_dir = Path(out_dir)
    present = [name for name in RUN_REPORT_NAMES if os.path.lexists(out_dir / name)]
    if present:
        raise InputError(
            f"{out_dir} already holds {', '.join(present)}; the kit never overwrites a report"
        )
    rendered = {fmt.filename: fmt.render(report) for fmt in FORMATS}
    out_dir.mkdir(parents=True, exist_ok=True)
    return {name: write_new_file(out_dir / name, data) for name, data in rendered.items()}
