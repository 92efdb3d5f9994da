"""Building a run's report document from its records, and grading it under its standard."""

from kit.grading.build import build_report, strip_timings
from kit.grading.environment import collect_environment

__all__ = ["build_report", "collect_environment", "strip_timings"]
