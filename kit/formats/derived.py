"""The report files derived from report.json (junit.xml, results.csv, summary.md).

Each is rendered from report.json's own bytes read back, never from the document in memory, so
anyone holding report.json regenerates them byte for byte: that is how verify and audit check
that a summary says what its report says (a summary claiming "all passed" beside a failing
report is refused, however validly it was signed).
"""

from __future__ import annotations

from collections.abc import Mapping

from kit.formats.files import render_derived
from kit.rundir import REPORT_JSON


def derived_differences(report_json: bytes, files: Mapping[str, bytes]) -> list[str]:
    """The derived files among ``files`` (name -> bytes) that are not what ``report_json``
    renders, one phrase each; a derived file absent from ``files`` is not judged here."""
    rendered = render_derived(report_json)
    return [
        f"{name} is not what {REPORT_JSON} renders ({_first_line_apart(files[name], data)})"
        for name, data in rendered.items()
        if name in files and files[name] != data
    ]


def _first_line_apart(found: bytes, expected: bytes) -> str:
    found_lines, expected_lines = found.splitlines(), expected.splitlines()
    for number, (a, b) in enumerate(zip(found_lines, expected_lines, strict=False), start=1):
        if a != b:
            return f"first difference at line {number}"
    return f"{len(found_lines)} lines where it renders {len(expected_lines)}"
