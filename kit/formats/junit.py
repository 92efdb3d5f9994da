"""junit.xml: one testsuite per tier, so CI systems show the run like any test job.

Every test failure status becomes a ``<failure>`` whose ``type`` is the kit status; SKIPPED and
NOT_APPLICABLE become ``<skipped>``. Text from the vendor's stack may hold characters XML 1.0
cannot carry at all (ANSI escapes, NUL): they are spelled out instead of breaking the file.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import Any

from kit.formats import view
from kit.formats.interface import ReportFormat
from kit.report.summary import summary_of
from kit.results import NOT_RUN_STATUSES
from kit.rundir import JUNIT_XML

_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _seconds(value: float) -> str:
    return f"{value:.3f}"


def properties(report: Mapping[str, Any]) -> dict[str, str]:
    return {
        "ckit.kit_version": report["kit"]["version"],
        "ckit.kit_digest": report["kit"]["digest"],
        "ckit.kit_released": "true" if view.kit_released(report) else "false",
        "ckit.standard": report["standard"]["version"],
        "ckit.torch_release": report["standard"]["torch_release"],
        "ckit.vendor": report["vendor"]["id"],
        "ckit.grade": view.grade_name(report),
    }


def testcase(report: Mapping[str, Any], record: Mapping[str, Any]) -> ET.Element:
    case = ET.Element(
        "testcase",
        {
            "name": xml_text(record["id"]),
            "classname": record["tier"],
            "time": _seconds(record["duration_s"]),
        },
    )
    status = record["status"]
    if status in view.FAILURES:
        failure = ET.SubElement(
            case, "failure", {"type": status, "message": xml_text(view.outcome_text(record))}
        )
        failure.text = xml_text(_failure_body(record))
    elif status in NOT_RUN_STATUSES:
        reason = view.skip_reason(report, record)
        ET.SubElement(case, "skipped", {"type": status, "message": xml_text(f"{status}: {reason}")})
    _flow_properties(case, record["details"])
    return case


#: The stage facts every flow record carries, shown as the test case's properties.
FLOW_FACTS = ("flow", "stage", "delegated_ops", "undelegated_ops", "lowering_s", "program_bytes",
              "cached")


def _flow_properties(case: ET.Element, details: Mapping[str, Any]) -> None:
    if "flow" not in details:
        return
    props = ET.Element("properties")
    case.insert(0, props)  # JUnit readers expect properties before the outcome
    for name in FLOW_FACTS:
        if name in details:
            value = json.dumps(details[name]) if not isinstance(details[name], str) \
                else details[name]
            ET.SubElement(props, "property", {"name": name, "value": xml_text(value)})


def _failure_body(record: Mapping[str, Any]) -> str:
    body = view.outcome_text(record)
    if record["details"]:
        body += "\n" + json.dumps(record["details"], sort_keys=True, ensure_ascii=False)
    return body


def _totals(records: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    return {
        "tests": str(len(records)),
        "failures": str(sum(1 for r in records if r["status"] in view.FAILURES)),
        "errors": "0",
        "skipped": str(sum(1 for r in records if r["status"] in NOT_RUN_STATUSES)),
        "time": _seconds(sum(r["duration_s"] for r in records)),
    }


def testsuite(report: Mapping[str, Any], tier: str) -> ET.Element:
    records = [r for r in view.records(report) if r["tier"] == tier]
    suite = ET.Element("testsuite", {"name": tier, **_totals(records)})
    props = ET.SubElement(suite, "properties")
    for name, value in properties(report).items():
        ET.SubElement(props, "property", {"name": name, "value": xml_text(value)})
    suite.extend(testcase(report, r) for r in records)
    return suite


class JunitFormat(ReportFormat):
    filename = JUNIT_XML

    def render(self, report: Mapping[str, Any]) -> bytes:
        name = f"ckit {report['standard']['version']} {report['vendor']['id']}"
        root = ET.Element("testsuites", {"name": xml_text(name), **_totals(view.records(report))})
        tiers = summary_of(report).tiers_in_order()
        root.extend(testsuite(report, tier) for tier, _ in tiers)
        ET.indent(root)
        data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
        return data + b"\n"
