"""The report read model: a run's report.json read, validated and typed for every reader.

Layers above it: ``kit.grading`` builds and grades a report, ``kit.formats`` writes its files,
``kit.views`` shows and compares finished reports, ``kit.verification`` checks a signed one.
"""

from kit.report.schema import ReportSchemaError, validate_report

__all__ = ["ReportSchemaError", "validate_report"]
