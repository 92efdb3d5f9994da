"""The report's file formats (report.json, junit.xml, results.csv, summary.md): one module each."""

from kit.formats.files import formats, register_format, write_report_files
from kit.formats.interface import ReportFormat

__all__ = ["ReportFormat", "formats", "register_format", "write_report_files"]
