"""junit.xml parses with xml.etree and its counts match the report."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from report_helpers import OPTIONAL, baseline_records, skip_entry

from kit.formats import write_report_files
from kit.formats.junit import JunitFormat
from kit.results import Status, TestRecord
from kit.tiers.registry import tier_names


def parse(report: dict) -> ET.Element:
    return ET.fromstring(JunitFormat().render(report))


def run_with_every_status() -> list[TestRecord]:
    return baseline_records() + [
        TestRecord("unit/opinfo/exp/float16/0", Status.FAIL_NUMERIC, 0.5, "3/16 elements differ",
                   {"max_abs_err": 0.25, "mismatched": 3}),
        TestRecord("unit/opinfo/log/float16/0", Status.ERROR, 0.1, "RuntimeError: boom"),
        TestRecord("unit/opinfo/tan/float16/0", Status.UNSUPPORTED, 0.1, "not implemented for"),
        TestRecord("unit/opinfo/erf/float16/0", Status.CRASH, 0.1, "worker died: SIGSEGV"),
        TestRecord("models/hf/gpt2/eager", Status.TIMEOUT, 300.0, "ran past 300 s"),
        TestRecord("unit/opinfo/cos/float64/0", Status.SKIPPED, 0.0, "skip manifest: precision"),
        TestRecord("models/hf/t5/export", Status.NOT_APPLICABLE, 0.0, "",
                   {"reason": "vendor does not claim flow export"}),
    ]


def test_suites_per_tier_and_counts_match_the_summary(make_report, manifest):
    report = make_report(run_with_every_status(), skips=manifest([skip_entry("unit/*/cos/*/*")]))
    root = parse(report)
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    assert list(suites) == list(tier_names())
    for tier, suite in suites.items():
        counts = report["summary"]["tiers"][tier]
        failed = sum(counts["statuses"][s] for s in ("FAIL_NUMERIC", "ERROR", "UNSUPPORTED",
                                                    "CRASH", "TIMEOUT"))
        not_run = counts["statuses"]["SKIPPED"] + counts["statuses"]["NOT_APPLICABLE"]
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases) == counts["total"]
        failures = [c for c in cases if c.find("failure") is not None]
        skips = [c for c in cases if c.find("skipped") is not None]
        assert int(suite.get("failures")) == len(failures) == failed
        assert int(suite.get("skipped")) == len(skips) == not_run
        assert {c.get("classname") for c in cases} <= {tier}  # a tier may have no record
    assert int(root.get("tests")) == report["summary"]["overall"]["total"] == 12


def test_failure_and_skip_messages(make_report, manifest):
    report = make_report(run_with_every_status(), skips=manifest([skip_entry("unit/*/cos/*/*")]))
    cases = {case.get("name"): case for case in parse(report).iter("testcase")}
    failure = cases["unit/opinfo/exp/float16/0"].find("failure")
    assert failure.get("type") == "FAIL_NUMERIC"
    assert failure.get("message") == "FAIL_NUMERIC: 3/16 elements differ"
    assert '"max_abs_err": 0.25' in failure.text
    skipped = cases["unit/opinfo/cos/float64/0"].find("skipped")
    assert skipped.get("message") == (
        "SKIPPED: precision (https://tracker.example.org/issues/42, expires 2027-03-31)"
    )
    not_applicable = cases["models/hf/t5/export"].find("skipped")
    assert not_applicable.get("message") == "NOT_APPLICABLE: vendor does not claim flow export"
    assert cases["deploy/import/0"].find("*") is None


def test_properties_carry_digest_vendor_and_grade(make_report):
    report = make_report(baseline_records())
    for suite in parse(report).findall("testsuite"):
        props = {p.get("name"): p.get("value") for p in suite.find("properties")}
        assert props["ckit.kit_digest"] == report["kit"]["digest"]
        assert props["ckit.vendor"] == "cpu"
        assert props["ckit.grade"] == "conformant"
        assert props["ckit.standard"] == report["standard"]["version"]


def test_markup_and_control_characters_in_messages_survive(make_report, tmp_path: Path):
    hostile = 'x < y && "q" \'s\' ]]> <!-- --> </testcase><testcase name="forged"/>\x1b[31m\x00\n2'
    record = TestRecord(OPTIONAL, Status.ERROR, 0.1, hostile, {"stderr": hostile})
    paths = write_report_files(make_report([record]), tmp_path)
    root = ET.parse(paths["junit.xml"]).getroot()
    (case,) = root.iter("testcase")
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("message") == "ERROR: " + hostile.replace("\x1b", "\\x1b").replace(
        "\x00", "\\x00"
    )
    assert "forged" not in {c.get("name") for c in root.iter("testcase")}
