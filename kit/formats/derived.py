"""The report files derived from report.json (junit.xml, results.csv, summary.md).

Each is rendered from report.json's document as read back from its bytes, never from the
document a run built in memory, so anyone holding report.json regenerates them byte for byte:
that is how verify and audit check that a summary says what its report says (a summary
claiming "all passed" beside a failing report is refused, however validly it was signed).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kit.formats.files import derived_of, render_derived
from kit.report.body import WrittenBody
from kit.rundir import REPORT_JSON


def derived_differences(report: Mapping[str, Any], files: Mapping[str, bytes]) -> list[str]:
    """The derived files among ``files`` (name -> bytes) that are not what ``report`` (the
    document report.json parses to) renders, one phrase each; a derived file absent from
    ``files`` is not judged here. Where ``files`` holds report.json, its bytes are rendered
    (``render_derived``: a report checked again in this process is not rendered again)."""
    report_json = files.get(REPORT_JSON)
    rendered = derived_of(report) if report_json is None else render_derived(report_json)
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


def body_derived(body: WrittenBody) -> dict[str, bytes]:
    """junit.xml, results.csv and summary.md of a ``body``-format report, rendered on demand
    from its body: they are not signed, so there is nothing to compare them with."""
    return derived_of(body.document())
