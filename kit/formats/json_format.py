"""report.json: the canonical, schema-validated document the signer signs."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kit.formats.interface import ReportFormat
from kit.report.schema import validate_report
from kit.rundir import REPORT_JSON


def dumps(report: Mapping[str, Any]) -> str:
    # Sorted keys and no NaN: the same report always gives the same, strictly valid, bytes.
    return json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)


class JsonFormat(ReportFormat):
    filename = REPORT_JSON

    def render(self, report: Mapping[str, Any]) -> bytes:
        validate_report(report)
        return (dumps(report) + "\n").encode("utf-8")
