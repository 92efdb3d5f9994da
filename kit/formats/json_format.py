"""report.json: the canonical, schema-validated document the signer signs.

Written in the canonical form the signed statement carries it in (``canonical_json``: sorted
keys, no whitespace), so a verifier proves report.json is the signed report by comparing bytes
instead of parsing both (``kit.verification.verify`` step 8). Pretty-print it to read it:
``python -m json.tool report.json``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kit.formats.interface import ReportFormat
from kit.report.schema import validate_report
from kit.rundir import REPORT_JSON
from kit.strict_json import canonical_json


class JsonFormat(ReportFormat):
    filename = REPORT_JSON

    def render(self, report: Mapping[str, Any]) -> bytes:
        validate_report(report)
        return canonical_json(report) + b"\n"
