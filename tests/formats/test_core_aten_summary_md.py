"""summary.md's core ATen line: shown where summary.md is rendered on demand (a ``body``-format
standard's, unsigned), never in a signed ``report-json`` summary, which verify renders again
byte for byte on whatever torch the verifier has installed."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "verification"))

from body_helpers import SELECT  # noqa: E402
from report_helpers import baseline_records, run_info  # noqa: E402

from kit.attribution.op_names import release_core_ops  # noqa: E402
from kit.formats.markdown import MarkdownFormat  # noqa: E402
from kit.patterns import select_ids  # noqa: E402
from kit.report.body import decode_body, encode_body  # noqa: E402
from kit.results import DISPATCH_KEY, Status, TestRecord  # noqa: E402
from kit.standard import BODY_FORMAT, load_standard  # noqa: E402

NATIVE_ADD = {DISPATCH_KEY: {"native": ["aten::add.Tensor"]}}


def _with_add_native(records: list[TestRecord]) -> list[TestRecord]:
    return [dataclasses.replace(r, details={**r.details, **NATIVE_ADD}) if r.tier == "unit"
            else r for r in records]


def test_a_signed_summary_md_never_shows_the_core_aten_line(make_report: Any) -> None:
    finished = {"started_at": "2026-11-29T11:00:00+00:00",
                "finished_at": "2026-11-29T11:05:00+00:00"}
    report = make_report(_with_add_native(baseline_records()), run=run_info(**finished))
    assert report["summary"]["attribution"]["ops"]["aten::add.Tensor"]["native"] > 0
    assert "core ATen" not in MarkdownFormat().render(report).decode()


def test_a_body_summary_md_shows_the_core_aten_ops_the_run_reached(make_report: Any) -> None:
    v3 = load_standard("v3")
    assert v3.report_format == BODY_FORMAT
    # Every test passes: a failure would have blame trace its ops in torch, for nothing here.
    records = [TestRecord(t, Status.PASS, 0.25, "", NATIVE_ADD)
               for t in select_ids(v3.test_ids("unit"), [SELECT])]
    body = decode_body(encode_body(make_report(records, standard_override=v3)))
    lines = MarkdownFormat().render(body.document()).decode().splitlines()
    release = load_standard("v3").torch_release
    core = release_core_ops(release)
    expected = (f"Core ATen ops (torch {release}): not known here (another torch release is "
                "installed).") if core is None else (
        f"Core ATen ops (torch {release}): 1/{len(core)} exercised, 1 native, 0 decomposed, "
        "0 through the fallback.")
    assert expected in lines
