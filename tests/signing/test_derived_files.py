"""Verify's step 13: junit.xml, results.csv and summary.md say what the signed report.json says.

The vendor signs every report file, so a derived file rewritten and signed again validly passes
steps 1-12; only regenerating it from report.json and comparing byte for byte catches the lie.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from signing_helpers import FAILING, REPORT, VENDOR, SignedRun

from kit.cli import main
from kit.errors import ExitCode
from kit.formats import files as files_module
from kit.formats.files import render_derived, write_report_files
from kit.signing.sign import sign_output_dir


def _resign_with(run: SignedRun, name: str, text: str) -> None:
    (run.run_dir / name).write_text(text, encoding="utf-8")
    sign_output_dir(run.run_dir, run.key_paths[VENDOR], None)


def _verify(run: SignedRun, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["verify", str(run.run_dir), "--keyring", str(run.keyring_dir)])
    return code, capsys.readouterr().err


def test_summary_claiming_all_passed_beside_a_failing_report_is_refused(
    signed_run: SignedRun, capsys: pytest.CaptureFixture[str]
) -> None:
    report = json.loads((signed_run.run_dir / "report.json").read_text())
    assert any(r["id"] == FAILING and r["status"] != "PASS" for r in report["records"])
    _resign_with(signed_run, "summary.md", "# acme: conformant\n\nAll 3068 tests passed.\n")
    code, err = _verify(signed_run, capsys)
    assert code == ExitCode.VERIFICATION_FAILED
    assert err == ("ckit: error: step 13: summary.md is not what report.json renders (first "
                   "difference at line 1): a derived file must say what the signed report "
                   "says\n")


def test_results_csv_hiding_the_failure_is_refused(
    signed_run: SignedRun, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = (signed_run.run_dir / "results.csv").read_text()
    assert "FAIL_NUMERIC" in csv
    _resign_with(signed_run, "results.csv", csv.replace("FAIL_NUMERIC", "PASS"))
    code, err = _verify(signed_run, capsys)
    assert code == ExitCode.VERIFICATION_FAILED
    assert err.startswith("ckit: error: step 13: results.csv is not what report.json renders")


def test_the_files_a_run_writes_regenerate_byte_for_byte(tmp_path: Path) -> None:
    written = write_report_files(REPORT, tmp_path / "run")
    rendered = render_derived(written["report.json"].read_bytes())
    assert sorted(rendered) == ["junit.xml", "results.csv", "summary.md"]
    for name, data in rendered.items():
        assert written[name].read_bytes() == data, name


def test_a_report_checked_again_is_rendered_once_and_its_files_still_compared(
    signed_run: SignedRun, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rendered: list[object] = []
    render = files_module.derived_of
    monkeypatch.setattr(files_module, "derived_of",
                        lambda report: rendered.append(report) or render(report))
    # Bytes no other test renders (a trailing space parses to the same document).
    report_json = (signed_run.run_dir / "report.json").read_bytes() + b" "
    first = render_derived(report_json)
    first.clear()  # what a caller does with its copy never reaches the kept rendering
    assert render_derived(report_json) == render(json.loads(report_json)) and len(rendered) == 1
    # A verify keeps the rendering of its report.json; the files beside it are still compared.
    assert _verify(signed_run, capsys)[0] == ExitCode.OK
    _resign_with(signed_run, "summary.md", "# acme: conformant\n\nAll passed.\n")
    code, err = _verify(signed_run, capsys)
    assert code == ExitCode.VERIFICATION_FAILED and "step 13: summary.md" in err, err
