"""The report's file formats (report.json, junit.xml, results.csv, summary.md): one module each."""

from kit.formats.files import FORMATS, write_report_files
from kit.formats.interface import ReportFormat

__all__ = ["FORMATS", "ReportFormat", "write_report_files"]
