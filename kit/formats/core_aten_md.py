"""summary.md's core ATen line (``kit.report.core_aten``), for reports whose summary.md is
rendered on demand: a ``body``-format standard's (v3 on), whose derived files are not signed.

A ``report-json`` standard's summary.md (v1, v2) is signed and rendered again byte for byte by
verify, and its report carries no core ATen field (its schema allows none): a line computed from
the verifier's installed torch would make the same report render differently on two machines,
so those summaries never show it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kit.errors import KitError
from kit.report.summary import summary_of
from kit.standard import BODY_FORMAT, load_standard


def core_aten_section(report: Mapping[str, Any]) -> list[str]:
    """One paragraph: the release's core ATen ops the device calls reached, and how."""
    if not _rendered_on_demand(report):
        return []
    coverage = summary_of(report).core_aten(str(report["standard"]["torch_release"]))
    if coverage is None:
        return []
    return [coverage.text()[:1].upper() + coverage.text()[1:] + "."]


def _rendered_on_demand(report: Mapping[str, Any]) -> bool:
    """Whether the report's standard writes the body format (its summary.md unsigned)."""
    try:
        return load_standard(str(report["standard"]["version"])).report_format == BODY_FORMAT
    except KitError:
        return False  # a standard this kit does not carry: its summary stays as rendered
