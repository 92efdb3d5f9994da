"""report.json is validated against standards/v1/report.schema.json before it is written."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import jsonschema
import pytest
from report_helpers import REQUIRED, baseline_records, run_info, skip_entry

from kit.formats import write_report_files
from kit.grading.build import SCHEMA_VERSION
from kit.report import ReportSchemaError, validate_report
from kit.report.schema import schema_path
from kit.results import Status, TestRecord
from kit.tiers.registry import tier_names


def test_schema_is_valid_draft_2020_12():
    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_built_report_validates(make_report, manifest):
    skips = manifest([skip_entry("unit/opinfo/sin/float64/*"), skip_entry("unit/none/*")])
    records = baseline_records() + [
        TestRecord("unit/opinfo/cos/float32/0", Status.FAIL_NUMERIC, 1.5, "differ", {"numel": 4})
    ]
    report = make_report(records, skips=skips)
    validate_report(report)
    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(report)


def test_written_report_json_validates(make_report, tmp_path: Path):
    paths = write_report_files(make_report(baseline_records()), tmp_path)
    validate_report(json.loads(paths["report.json"].read_text(encoding="utf-8")))


@pytest.mark.parametrize(
    ("where", "change"),
    [
        ("records/0/status", lambda r: r["records"][0].update(status="MAYBE")),
        ("(top level)", lambda r: r.update(injected_field=True)),
        ("grade/name", lambda r: r["grade"].update(name="gold")),
        ("run", lambda r: r["run"].pop("complete")),
        ("policy/violations/0", lambda r: r["policy"]["violations"].append(
            {"kind": "never-skip", "message": "a never-skip violation without its test"})),
    ],
)
def test_schema_violation_is_a_bug_and_writes_nothing(make_report, tmp_path: Path, where, change):
    report = copy.deepcopy(make_report(baseline_records()))
    change(report)
    with pytest.raises(ReportSchemaError, match=re.escape(f"at {where}:")):
        write_report_files(report, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_record_for_an_unknown_tier_is_rejected(make_report):
    report = make_report([*baseline_records(), TestRecord("bench/speed/0", Status.PASS)])
    with pytest.raises(ReportSchemaError):
        validate_report(report)


def test_report_sections(make_report, vendor):
    report = make_report(baseline_records())
    assert report["schema_version"] == SCHEMA_VERSION == 2
    assert report["kit"]["torch_release"] == report["standard"]["torch_release"] == "2.13.0"
    # Named by id: the profile's display name is the vendor's own word (issue 36).
    assert report["vendor"] == {**vendor.summary(), "display_name": vendor.id}
    assert report["records"][0] == {
        "id": "deploy/import/0",
        "tier": "deploy",
        "status": "PASS",
        "duration_s": 0.25,
        "message": "",
        "details": {},
    }
    assert [r["id"] for r in report["records"]] == sorted(r.id for r in baseline_records())
    assert list(report["summary"]["tiers"]) == list(tier_names())
    assert report["summary"]["tiers"]["unit"]["statuses"]["PASS"] == 3
    assert REQUIRED in {r["id"] for r in report["records"]}


def test_manifest_path_is_relative_to_the_vendor_directory(make_report, vendor):
    from kit.vendors import load_skip_manifest

    skips = load_skip_manifest(vendor.skip_manifest_path)
    section = make_report(baseline_records(), skips=skips)["skip_manifest"]
    assert section["path"] == "skips.yaml"
    assert section["sha256"] == skips.sha256


def test_run_records_the_date_expiry_was_judged_on(make_report):
    run = run_info()
    run["today"] = "2026-01-01"  # the runner passes it too; the date actually used wins
    report = make_report(baseline_records(), run=run)
    assert report["run"]["today"] == "2026-11-22"


def test_standard_version_cannot_point_the_schema_elsewhere(make_report):
    report = make_report(baseline_records())
    report["standard"]["version"] = "../../vendors/cpu"
    with pytest.raises(ReportSchemaError, match="no valid standard version"):
        validate_report(report)
