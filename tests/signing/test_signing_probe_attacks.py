"""Issue 24's probe on signing: a report nested 988 deep ended ``ckit sign`` in an internal
error (the canonical encoding ran out of recursion), and a statement's ``predicate.kit_version``
was never held to the report's ``kit.version``. Each is refused with one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from signing_helpers import REPORT, VENDOR, SignedRun, write_report_files

from kit.cli import main
from kit.errors import ExitCode
from kit.strict_json import MAX_JSON_DEPTH, canonical_json


def _deep_report(depth: int) -> str:
    shallow = json.dumps({**REPORT, "deep": None})
    return shallow.replace('"deep": null', f'"deep": {"[" * depth}1{"]" * depth}')


def test_signing_a_988_deep_report_is_refused_in_one_line(
    tmp_path: Path, signed_run: SignedRun, capsys: pytest.CaptureFixture[str],
) -> None:
    run = tmp_path / "deep"
    write_report_files(run, REPORT)
    (run / "report.json").write_text(_deep_report(988), encoding="utf-8")
    code = main(["sign", str(run), "--key", str(signed_run.key_paths[VENDOR])])
    err = capsys.readouterr().err
    assert code == ExitCode.INPUT_ERROR
    # Nested deeper than the limit, or than the parser's own stack where that is shallower
    # (under pytest's frames): one line either way, never an internal error.
    (line,) = err.splitlines()
    assert line.startswith(f"ckit: error: {run}/report.json: "), line
    assert "nested deeper than" in line or "recursion" in line, line
    assert not (run / "report.dsse.json").exists()


def test_a_report_just_past_the_limit_is_refused(
    tmp_path: Path, signed_run: SignedRun, capsys: pytest.CaptureFixture[str],
) -> None:
    run = tmp_path / "past-the-limit"
    write_report_files(run, REPORT)
    (run / "report.json").write_text(_deep_report(MAX_JSON_DEPTH), encoding="utf-8")
    code = main(["sign", str(run), "--key", str(signed_run.key_paths[VENDOR])])
    assert code == ExitCode.INPUT_ERROR
    assert capsys.readouterr().err == (
        f"ckit: error: {run}/report.json: nested deeper than {MAX_JSON_DEPTH} levels\n")


def test_a_report_as_deep_as_the_limit_still_signs(
    tmp_path: Path, signed_run: SignedRun, capsys: pytest.CaptureFixture[str],
) -> None:
    run = tmp_path / "at-the-limit"
    write_report_files(run, REPORT)
    (run / "report.json").write_text(_deep_report(MAX_JSON_DEPTH - 1), encoding="utf-8")
    assert main(["sign", str(run), "--key", str(signed_run.key_paths[VENDOR])]) == ExitCode.OK
    assert (run / "report.dsse.json").is_file()


def test_predicate_kit_version_differing_from_the_report_is_refused_by_verify(
    signed_run: SignedRun, capsys: pytest.CaptureFixture[str],
) -> None:
    """A validly signed statement whose predicate names another kit than its report names."""
    statement = signed_run.statement()
    assert statement["predicate"]["kit_version"] == statement["predicate"]["report"]["kit"][
        "version"]
    statement["predicate"]["kit_version"] = "9.9.9"
    signed_run.sign_raw(canonical_json(statement))
    code = main(["verify", str(signed_run.envelope_path), "--keyring",
                 str(signed_run.keyring_dir)])
    (line,) = capsys.readouterr().err.splitlines()
    assert code == ExitCode.VERIFICATION_FAILED
    reported = statement["predicate"]["report"]["kit"]["version"]
    assert line.endswith(f"statement predicate.kit_version '9.9.9' is not the report's "
                         f"kit.version {reported!r}"), line
