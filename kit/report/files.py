"""Writing every report format into the run's output directory."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kit.report.csv_format import CsvFormat
from kit.report.interface import ReportFormat
from kit.report.json_format import JsonFormat
from kit.report.junit import JunitFormat
from kit.report.markdown import MarkdownFormat

FORMATS: tuple[ReportFormat, ...] = (JsonFormat(), JunitFormat(), CsvFormat(), MarkdownFormat())


def write_report_files(report: Mapping[str, Any], out_dir: Path) -> dict[str, Path]:
    """Write every format; returns file name -> path.

    All formats render before any file is written, so a schema violation leaves no half report.
    """
    rendered = {fmt.filename: fmt.render(report) for fmt in FORMATS}
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return {name: _write_atomically(out_dir / name, data) for name, data in rendered.items()}


def _write_atomically(path: Path, data: bytes) -> Path:
    # A reader (or the signer) never sees a half-written file, even if the run is killed.
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(temp, 0o644)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return path
