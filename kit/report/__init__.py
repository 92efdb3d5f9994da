"""The conformance report: building it, grading the run and writing its file formats.

``build_report`` turns the runner's records into one JSON-ready document (validated against
``standards/<version>/report.schema.json``); ``write_report_files`` renders it as report.json,
junit.xml, results.csv and summary.md.
"""

from kit.report.build import build_report, strip_timings
from kit.report.environment import collect_environment
from kit.report.files import FORMATS, write_report_files
from kit.report.interface import ReportFormat
from kit.report.schema import ReportSchemaError, validate_report

__all__ = [
    "FORMATS",
    "ReportFormat",
    "ReportSchemaError",
    "build_report",
    "collect_environment",
    "strip_timings",
    "validate_report",
    "write_report_files",
]
