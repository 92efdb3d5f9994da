"""results.csv: one row per test, for spreadsheets and quick scripting.

Text cells that a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@`` first) get a
leading ``'``: messages come from the vendor's stack and must not execute on a reviewer's desk.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any

from kit.formats import view
from kit.formats.interface import ReportFormat
from kit.report.op_dtype import op_and_dtype_of
from kit.rundir import RESULTS_CSV

HEADER = (
    "id",
    "tier",
    "status",
    "duration_s",
    "message",
    "max_abs_err",
    "max_rel_err",
    "mismatched",
    "skip_reason",
    # From the test id (kit.report.op_dtype); empty where the tier names none.
    "op",
    "dtype",
    # The flows tier's (empty for other records).
    "flow",
    "stage",
)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralize(text: str) -> str:
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def row(report: Mapping[str, Any], record: Mapping[str, Any]) -> list[str]:
    details = record["details"]
    return [
        record["id"],
        record["tier"],
        record["status"],
        view.detail_text(record["duration_s"]),
        neutralize(record["message"]),
        view.detail_text(details.get("max_abs_err")),
        view.detail_text(details.get("max_rel_err")),
        view.detail_text(details.get("mismatched")),
        neutralize(view.skip_reason(report, record)),
        *(neutralize(cell) for cell in op_and_dtype_of(record["id"])),
        neutralize(view.detail_text(details.get("flow"))),
        neutralize(view.detail_text(details.get("stage"))),
    ]


class CsvFormat(ReportFormat):
    filename = RESULTS_CSV

    def render(self, report: Mapping[str, Any]) -> bytes:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(HEADER)
        for record in view.records(report):
            writer.writerow(row(report, record))
        return buffer.getvalue().encode("utf-8")
