"""results.csv: the documented header, a lossless round trip, and no spreadsheet formulas."""

from __future__ import annotations

import csv
import io

from report_helpers import OPTIONAL, REQUIRED, baseline_records, skip_entry

from kit.formats.csv_format import HEADER, CsvFormat
from kit.results import Status, TestRecord


def read_rows(report: dict) -> list[dict[str, str]]:
    text = CsvFormat().render(report).decode("utf-8")
    return list(csv.DictReader(io.StringIO(text, newline="")))


def test_header_is_the_documented_one(make_report):
    text = CsvFormat().render(make_report(baseline_records())).decode("utf-8")
    assert text.splitlines()[0] == (
        "id,tier,status,duration_s,message,max_abs_err,max_rel_err,mismatched,skip_reason,"
        "op,dtype,flow,stage"
    )
    assert tuple(text.splitlines()[0].split(",")) == HEADER


def test_round_trip_keeps_every_value(make_report, manifest):
    message = 'line one, with "quotes"\nline two; unicode: µ≈ß'
    records = baseline_records() + [
        TestRecord("unit/opinfo/exp/float16/0", Status.FAIL_NUMERIC, 0.123456789, message,
                   {"max_abs_err": 0.1 + 0.2, "max_rel_err": 1e-300, "mismatched": 12}),
        TestRecord("unit/opinfo/cos/float64/0", Status.SKIPPED, 0.0, "skip manifest"),
        TestRecord("models/hf/t5/export", Status.NOT_APPLICABLE, 0.0, "",
                   {"reason": "vendor does not claim flow export"}),
    ]
    report = make_report(records, skips=manifest([skip_entry("unit/*/cos/*/*")]))
    rows = {row["id"]: row for row in read_rows(report)}
    assert list(rows) == sorted(r.id for r in records)
    failed = rows["unit/opinfo/exp/float16/0"]
    assert failed["tier"] == "unit" and failed["status"] == "FAIL_NUMERIC"
    assert failed["message"] == message
    assert float(failed["duration_s"]) == 0.123456789
    assert float(failed["max_abs_err"]) == 0.1 + 0.2
    assert float(failed["max_rel_err"]) == 1e-300
    assert int(failed["mismatched"]) == 12
    assert rows[REQUIRED]["max_abs_err"] == rows[REQUIRED]["skip_reason"] == ""
    assert rows["unit/opinfo/cos/float64/0"]["skip_reason"].startswith("precision (https://")
    assert rows["models/hf/t5/export"]["skip_reason"] == "vendor does not claim flow export"


def test_op_and_dtype_columns_come_from_the_test_id(make_report):
    records = [
        TestRecord("unit/opinfo/nn.functional.conv2d/bfloat16/3", Status.PASS, 0.1),
        TestRecord("unit/opspec/conv2d/float16/nchw/sample0", Status.PASS, 0.1),
        TestRecord("flows/executorch_xnnpack/opinfo/cumsum/float32/0", Status.NOT_DELEGATED,
                   0.1, "", {"flow": "executorch_xnnpack", "stage": "NOT_DELEGATED"}),
        TestRecord("models/hf/bert/eager", Status.PASS, 0.1),
        TestRecord("deploy/imports", Status.PASS, 0.1),
    ]
    rows = {row["id"]: (row["op"], row["dtype"]) for row in read_rows(make_report(records))}
    assert rows == {
        "unit/opinfo/nn.functional.conv2d/bfloat16/3": ("nn.functional.conv2d", "bfloat16"),
        "unit/opspec/conv2d/float16/nchw/sample0": ("conv2d", "float16"),
        "flows/executorch_xnnpack/opinfo/cumsum/float32/0": ("cumsum", "float32"),
        "models/hf/bert/eager": ("", ""),
        "deploy/imports": ("", ""),
    }


def test_flow_records_carry_their_flow_and_stage(make_report):
    record = TestRecord("flows/onnxruntime_cpu/opinfo/add/float32/0", Status.PASS, 0.1, "",
                        {"flow": "onnxruntime_cpu", "stage": "PASS", "delegated_ops": 1})
    (row,) = read_rows(make_report([record]))
    assert (row["flow"], row["stage"], row["op"]) == ("onnxruntime_cpu", "PASS", "add")


def test_csv_formula_injection_is_neutralized(make_report):
    record = TestRecord(OPTIONAL, Status.ERROR, 0.1, '=HYPERLINK("http://evil.example","x")')
    (row,) = read_rows(make_report([record]))
    assert row["message"] == '\'=HYPERLINK("http://evil.example","x")'


def test_nan_detail_is_written_as_text(make_report):
    record = TestRecord(OPTIONAL, Status.FAIL_NUMERIC, 0.1, "nan", {"max_abs_err": float("nan")})
    (row,) = read_rows(make_report([record]))
    assert row["max_abs_err"] == "nan"
