"""Attacks on what a report says, and on how verify reads it: each is rejected in one line.

The signer holds a valid key, so a signature proves nothing about content: every content attack
here edits report.json and signs it again with the vendor's own key (``resign``, the kit's own
signing code). Only the content steps (9-12) can stop those. The file-system attacks (a FIFO,
/dev/zero, a symlink out of the run directory) run the real CLI in a subprocess with a timeout,
so a hang fails the test instead of stalling it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from signing_helpers import FAILING, VENDOR, SignedRun, make_signed_run, write_report_files

from kit.cli import main
from kit.errors import ExitCode, VerificationError
from kit.grading.released import ReleasedKit
from kit.hashing import sha256_bytes
from kit.report.summary import summarize
from kit.results import TestRecord
from kit.signing.dsse import Envelope
from kit.signing.limits import MAX_ENVELOPE_BYTES, MAX_SIGNATURES
from kit.signing.sign import sign_output_dir
from kit.standard import load_standard
from kit.strict_json import canonical_json
from kit.verification.verify import verify_envelope

Attack = Callable[[SignedRun], None]
Report = dict[str, Any]

#: Anything a terminal acts on: C0 controls but newline, DEL, C1 controls.
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def resign(run: SignedRun, change: Callable[[Report], None]) -> None:
    """Edit report.json as a dishonest signer would (the files derived from it rendered again,
    so only the attacked claim is wrong), then sign it again with the vendor's key."""
    path = run.run_dir / "report.json"
    report = json.loads(path.read_text())
    change(report)
    write_report_files(run.run_dir, report)
    sign_output_dir(run.run_dir, run.key_paths[VENDOR], None)


def recount(report: Report) -> None:
    """Make the summary agree with edited records, so only the attacked claim is wrong."""
    records = [TestRecord.from_json(r) for r in report["records"]]
    declared = load_standard(report["standard"]["version"]).statuses
    report["summary"] = summarize(records, report["missing"], report["run"]["tiers"],
                                  declared).to_json()


def sign_statement_raw(run: SignedRun, payload: bytes, report_json: bytes | None = None) -> None:
    """Sign exact payload bytes validly; optionally write report.json with its digest signed."""
    if report_json is not None:
        (run.run_dir / "report.json").write_bytes(report_json)
    run.sign_raw(payload)


def at_time(started: str, finished: str, today: str) -> Callable[[Report], None]:
    def change(report: Report) -> None:
        report["run"].update(started_at=started, finished_at=finished, today=today)

    return change


def _in_days(days: int) -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0) + dt.timedelta(days=days)


# --- step 9: a well-formed report of a standard this kit knows -------------------------------


def report_with_only_vendor_and_grade(run: SignedRun) -> None:
    def change(report: Report) -> None:
        for key in list(report):
            if key not in ("vendor", "grade"):
                del report[key]
        report["grade"] = {"name": "conformant", "reasons": []}

    resign(run, change)


def unknown_standard_v0(run: SignedRun) -> None:
    resign(run, lambda report: report["standard"].update(version="v0"))


def standard_certifying_another_torch_release(run: SignedRun) -> None:
    resign(run, lambda report: report["standard"].update(torch_release="1.0.0"))


def ansi_escape_in_grade(run: SignedRun) -> None:
    forged = "\r\x1b[2KOK: acme report signed by 0123456789abcdef, kit 0.1.0, grade conformant"
    resign(run, lambda report: report["grade"].update(name=forged, reasons=[]))


def timestamp_without_utc_offset(run: SignedRun) -> None:
    naive = _in_days(-1).replace(tzinfo=None).isoformat()
    resign(run, lambda report: report["run"].update(started_at=naive))


def integer_duration_too_large_for_a_float(run: SignedRun) -> None:
    path = run.run_dir / "report.json"
    text = path.read_text()
    huge = re.sub(r'"duration_s": ?0\.5\b', '"duration_s":1' + "0" * 400, text, count=1)
    assert huge != text
    path.write_text(huge)
    sign_output_dir(run.run_dir, run.key_paths[VENDOR], None)


# --- steps 1, 5, 8: numbers JSON can spell but no float can hold ------------------------------


def float_literal_1e999_in_payload(run: SignedRun) -> None:
    payload = canonical_json(run.statement())
    forged = payload.replace(b'"max_abs_err":0.00125', b'"max_abs_err":1e999', 1)
    assert forged != payload
    sign_statement_raw(run, forged)


def float_literal_1e999_in_report_json(run: SignedRun) -> None:
    report_json = (run.run_dir / "report.json").read_bytes()
    forged = re.sub(rb'"max_abs_err": ?0\.00125', b'"max_abs_err":1e999', report_json, count=1)
    assert forged != report_json
    statement = run.statement()
    for subject in statement["subject"]:
        if subject["name"] == "report.json":
            subject["digest"]["sha256"] = sha256_bytes(forged)  # step 7 passes; step 8 parses
    sign_statement_raw(run, canonical_json(statement), forged)


def more_signatures_than_the_cap(run: SignedRun) -> None:
    envelope = run.envelope()
    many = envelope.signatures * (MAX_SIGNATURES + 1)
    run.write_envelope(Envelope(envelope.payload_type, envelope.payload, many))


def signature_list_padded_with_strings(run: SignedRun) -> None:
    # No '{' to count: the list is refused by its length, before any item is decoded.
    document = run.envelope().to_json()
    document["signatures"] += ["x"] * MAX_SIGNATURES
    run.envelope_path.write_text(json.dumps(document))


def envelope_over_the_size_limit(run: SignedRun) -> None:
    # Sparse: no disk is spent, but its size is over the limit and it is refused unread.
    os.truncate(run.envelope_path, MAX_ENVELOPE_BYTES + 1)


# --- step 10: the kit is a released one, or says it is not ------------------------------------


def zero_kit_digest_claiming_release(run: SignedRun) -> None:
    resign(run, lambda report: report["kit"].update(digest="0" * 64, released=True))


# --- step 11: the run's times ------------------------------------------------------------------


def report_dated_2020(run: SignedRun) -> None:
    resign(run, at_time("2020-01-01T10:00:00+00:00", "2020-01-01T10:05:00+00:00", "2020-01-01"))


def report_signed_before_it_started(run: SignedRun) -> None:
    start = _in_days(1)
    finish = start + dt.timedelta(minutes=5)
    resign(run, at_time(start.isoformat(), finish.isoformat(), start.date().isoformat()))


def report_finished_before_it_started(run: SignedRun) -> None:
    start, finish = _in_days(-1), _in_days(-2)
    resign(run, at_time(start.isoformat(), finish.isoformat(), start.date().isoformat()))


def skip_expiry_judged_on_a_backdated_day(run: SignedRun) -> None:
    # A date moved back would revive expired skip-manifest entries.
    start, finish = _in_days(-1), _in_days(-1) + dt.timedelta(minutes=5)
    backdated = (start - dt.timedelta(days=90)).date().isoformat()
    resign(run, at_time(start.isoformat(), finish.isoformat(), backdated))


# --- step 12: facts and grade derived again from the records and the standard ------------------


def conformant_grade_beside_failing_records(run: SignedRun) -> None:
    def change(report: Report) -> None:
        for record in report["records"][:7]:
            record["status"] = "FAIL_NUMERIC"
        recount(report)  # the counts are honest; only the grade lies
        report["grade"] = {"name": "conformant", "reasons": []}

    resign(run, change)


def summary_hiding_a_failing_record(run: SignedRun) -> None:
    def change(report: Report) -> None:
        statuses = report["summary"]["overall"]["statuses"]
        statuses["PASS"] += statuses["FAIL_NUMERIC"]
        statuses["FAIL_NUMERIC"] = 0

    resign(run, change)


def policy_violation_dropped(run: SignedRun) -> None:
    resign(run, lambda report: report["policy"].update(violations=[]))


def narrowed_run_claiming_to_be_complete(run: SignedRun) -> None:
    resign(run, lambda report: report["run"].update(complete=True))


def failing_record_dropped_and_not_listed_missing(run: SignedRun) -> None:
    def change(report: Report) -> None:
        report["records"] = [r for r in report["records"] if r["id"] != FAILING]
        recount(report)

    resign(run, change)


def record_listed_as_missing_too(run: SignedRun) -> None:
    def change(report: Report) -> None:
        report["missing"] = [FAILING]
        recount(report)

    resign(run, change)


def duplicate_record(run: SignedRun) -> None:
    def change(report: Report) -> None:
        passing = dict(report["records"][0], status="PASS")
        report["records"].append(passing)
        recount(report)

    resign(run, change)


#: (attack, the step that must stop it, a pattern of its one-line message)
ATTACKS: list[tuple[Attack, int, str]] = [
    (report_with_only_vendor_and_grade, 9, r"report names no standard \(field standard\.version\)"),
    (unknown_standard_v0, 9, r"names standard 'v0', which this kit does not know \(it knows v1"),
    (standard_certifying_another_torch_release, 9, r"standard v\d+ certifies torch '1\.0\.0'"),
    (ansi_escape_in_grade, 9, r"report violates report\.schema\.json .* at grade/name: "),
    (timestamp_without_utc_offset, 9, r"run\.started_at .* has no UTC offset"),
    (integer_duration_too_large_for_a_float, 9, r"duration_s is too large to be finite"),
    (float_literal_1e999_in_payload, 5, r"payload: number 1e999 is too large to be finite"),
    (float_literal_1e999_in_report_json, 8, r"report\.json: number 1e999 is too large"),
    (more_signatures_than_the_cap, 1, rf"more than {MAX_SIGNATURES} signature objects"),
    (
        signature_list_padded_with_strings,
        1,
        rf"envelope has {MAX_SIGNATURES + 1} signatures; at most {MAX_SIGNATURES} are accepted",
    ),
    (envelope_over_the_size_limit, 1, rf"envelope .* is over the limit of {MAX_ENVELOPE_BYTES}"),
    (zero_kit_digest_claiming_release, 10, r"claims a released kit, but digest 0{16} is not in"),
    (report_dated_2020, 11, r"the run started 2020-01-01 10:00:00\+00:00, before ckit existed"),
    (report_signed_before_it_started, 11, r"after this verification .*signed before it started"),
    (report_finished_before_it_started, 11, r"the run finished \(.*\) before it started"),
    (skip_expiry_judged_on_a_backdated_day, 11, r"skip expiry was judged on .*, outside the run"),
    (
        conformant_grade_beside_failing_records,
        12,
        r"claims grade 'conformant', but its records graded under standard v\d+ give "
        r"'non-conformant'",
    ),
    (
        summary_hiding_a_failing_record,
        12,
        r"summary does not match the records \(summary\.overall\.statuses\.FAIL_NUMERIC: "
        r"report says 0, records give 1\)",
    ),
    (policy_violation_dropped, 12, r"policy violations differ .*report lists 0, recomputed 1"),
    (narrowed_run_claiming_to_be_complete, 12, r"run says complete=true, .*complete=false"),
    (
        failing_record_dropped_and_not_listed_missing,
        12,
        rf"expects test '{re.escape(FAILING)}' of this run, but the report neither records it",
    ),
    (record_listed_as_missing_too, 12, rf"'{re.escape(FAILING)}' is listed as missing but has"),
    (duplicate_record, 9, rf"record '{re.escape(FAILING)}' appears twice"),
]


@pytest.mark.parametrize(
    ("attack", "step", "pattern"), ATTACKS, ids=[attack.__name__ for attack, _, _ in ATTACKS]
)
def test_content_attack_is_rejected_at_its_step(
    signed_run: SignedRun, attack: Attack, step: int, pattern: str
) -> None:
    signed_run.verify()  # the untouched run is accepted: the attack alone causes the rejection
    attack(signed_run)
    with pytest.raises(VerificationError) as caught:
        signed_run.verify()
    message = str(caught.value)
    assert message.startswith(f"step {step}: "), message
    assert re.search(pattern, message), message
    assert "\n" not in message
    assert caught.value.exit_code is ExitCode.VERIFICATION_FAILED


@pytest.mark.parametrize(
    "attack", [attack for attack, _, _ in ATTACKS], ids=[a.__name__ for a, _, _ in ATTACKS]
)
def test_cli_rejects_in_one_printable_line(
    capsys: pytest.CaptureFixture[str], signed_run: SignedRun, attack: Attack
) -> None:
    attack(signed_run)
    code = main(["verify", str(signed_run.run_dir), "--keyring", str(signed_run.keyring_dir)])
    out, err = capsys.readouterr()
    assert code == ExitCode.VERIFICATION_FAILED
    assert out == ""
    assert re.fullmatch(r"ckit: error: step \d+: [^\n]+\n", err), err
    assert not CONTROL.search(err), err


def test_every_content_attack_gets_its_own_message(tmp_path: Path) -> None:
    messages: dict[str, str] = {}
    for index, (attack, _, _) in enumerate(ATTACKS):
        run = make_signed_run(tmp_path / str(index))
        attack(run)
        with pytest.raises(VerificationError) as caught:
            run.verify()
        wording = re.sub(r"[0-9a-f]{16,}|/\S+|\d[\d:T+ -]*\d", "X", str(caught.value))
        messages[attack.__name__] = wording
    duplicates = {m for m in messages.values() if list(messages.values()).count(m) > 1}
    assert not duplicates, {name: m for name, m in messages.items() if m in duplicates}


# --- accepted, with what the reader must know ---------------------------------------------------


def test_honest_report_verifies_without_a_released_kit_note_when_released(
    signed_run: SignedRun,
) -> None:
    resign(signed_run, lambda report: report["kit"].update(released=True))
    report = json.loads((signed_run.run_dir / "report.json").read_text())
    release = ReleasedKit(report["kit"]["version"], report["kit"]["digest"], dt.date(2026, 11, 1))
    verified = verify_envelope(
        signed_run.envelope_path, keyring_dir=signed_run.keyring_dir, released_kits=[release]
    )
    assert verified.kit.released
    assert verified.notes == ()


def test_released_digest_claimed_by_another_kit_version_is_rejected(
    signed_run: SignedRun,
) -> None:
    resign(signed_run, lambda report: report["kit"].update(released=True, version="9.9.9"))
    report = json.loads((signed_run.run_dir / "report.json").read_text())
    release = ReleasedKit("0.1.0", report["kit"]["digest"], dt.date(2026, 11, 1))
    with pytest.raises(VerificationError, match=r"^step 10: digest \w{16} is released kit 0\.1\.0"):
        verify_envelope(
            signed_run.envelope_path, keyring_dir=signed_run.keyring_dir, released_kits=[release]
        )


def test_zero_digest_that_says_it_is_unreleased_verifies_with_a_note(
    signed_run: SignedRun,
) -> None:
    resign(signed_run, lambda report: report["kit"].update(digest="0" * 64, released=False))
    verified = signed_run.verify()
    assert verified.notes == (
        "not a released kit (kit 0.1.0, digest 0000000000000000): its results are not "
        "comparable with released-kit results",
    )


def test_symlink_inside_the_run_dir_is_followed(signed_run: SignedRun) -> None:
    kept = signed_run.run_dir / "kept"
    kept.mkdir()
    (signed_run.run_dir / "results.csv").rename(kept / "results.csv")
    (signed_run.run_dir / "results.csv").symlink_to(Path("kept") / "results.csv")
    assert signed_run.verify().vendor == VENDOR


# --- the real CLI, in a subprocess: a hang or a traceback fails the test ----------------------


def _ckit_verify(run: SignedRun, target: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kit", "verify", str(target), "--keyring", str(run.keyring_dir)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def _assert_rejected_in_one_line(result: subprocess.CompletedProcess[str], step: int) -> str:
    assert result.returncode == ExitCode.VERIFICATION_FAILED, result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert not CONTROL.search(result.stderr), result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"ckit: error: step {step}: "), lines[0]
    return lines[0]


def test_envelope_symlinked_to_dev_zero(signed_run: SignedRun) -> None:
    signed_run.envelope_path.unlink()
    signed_run.envelope_path.symlink_to("/dev/zero")
    line = _assert_rejected_in_one_line(_ckit_verify(signed_run, signed_run.envelope_path), 1)
    assert "is not a regular file (a character device)" in line


def test_envelope_is_a_fifo(signed_run: SignedRun) -> None:
    signed_run.envelope_path.unlink()
    os.mkfifo(signed_run.envelope_path)
    line = _assert_rejected_in_one_line(_ckit_verify(signed_run, signed_run.envelope_path), 1)
    assert "is not a regular file (a FIFO)" in line


def test_subject_file_is_a_fifo(signed_run: SignedRun) -> None:
    (signed_run.run_dir / "junit.xml").unlink()
    os.mkfifo(signed_run.run_dir / "junit.xml")
    line = _assert_rejected_in_one_line(_ckit_verify(signed_run, signed_run.run_dir), 7)
    assert "junit.xml is not a regular file (a FIFO)" in line


def test_symlink_out_of_run_dir(signed_run: SignedRun, tmp_path: Path) -> None:
    # The file outside holds the very bytes that were signed: only the symlink is wrong.
    outside = tmp_path / "elsewhere.csv"
    results = signed_run.run_dir / "results.csv"
    outside.write_bytes(results.read_bytes())
    results.unlink()
    results.symlink_to(outside)
    line = _assert_rejected_in_one_line(_ckit_verify(signed_run, signed_run.run_dir), 7)
    assert "subject file results.csv is a symlink leading out of " in line


def test_float_literal_1e999(signed_run: SignedRun) -> None:
    float_literal_1e999_in_payload(signed_run)
    line = _assert_rejected_in_one_line(_ckit_verify(signed_run, signed_run.run_dir), 5)
    assert line.endswith("payload: number 1e999 is too large to be finite")


def test_ansi_escape_in_grade_never_reaches_the_terminal(signed_run: SignedRun) -> None:
    ansi_escape_in_grade(signed_run)
    line = _assert_rejected_in_one_line(_ckit_verify(signed_run, signed_run.run_dir), 9)
    assert "\\r\\x1b[2KOK: acme report" in line  # shown, escaped, never acted on


def test_ansi_escape_in_an_accepted_field_is_printed_escaped(signed_run: SignedRun) -> None:
    # kit.version is free text the note repeats: the report is accepted, the escape defused.
    resign(signed_run, lambda report: report["kit"].update(version="0.1.0\r\x1b[2KOK: forged"))
    result = _ckit_verify(signed_run, signed_run.run_dir)
    assert result.returncode == ExitCode.OK, result.stderr
    assert not CONTROL.search(result.stdout), result.stdout
    assert "kit 0.1.0\\r\\x1b[2KOK: forged, digest" in result.stdout


def test_honest_report_verifies_in_the_cli(signed_run: SignedRun) -> None:
    result = _ckit_verify(signed_run, signed_run.run_dir)
    assert result.returncode == ExitCode.OK, result.stderr
    verdict, note = result.stdout.splitlines()
    assert verdict.startswith("OK: acme report signed by ")
    assert verdict.endswith(", kit 0.1.0, grade non-conformant")
    assert note.startswith("note: not a released kit (kit 0.1.0, digest ")


@pytest.mark.slow
def test_real_run_verifies(tmp_path: Path) -> None:
    """A report from a real ``ckit run`` (signed by the run itself) passes every step."""
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    for name in ("CKIT_SIGNING_KEY", "CKIT_KEY_PASSPHRASE", "CKIT_TODAY"):
        env.pop(name, None)
    keyring, out = tmp_path / "keyring", tmp_path / "run"

    def ckit(*argv: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "kit", *argv]
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)

    generated = ckit("keys", "generate", "--vendor", "cpu", "--keyring", str(keyring))
    assert generated.returncode == ExitCode.OK, generated.stderr
    ran = ckit("run", "--vendor", "cpu", "--select", "unit/opinfo/add/float32/?", "--out", str(out))
    assert ran.returncode in (ExitCode.OK, ExitCode.NOT_CONFORMANT, ExitCode.PARTIAL), ran.stderr
    verified = ckit("verify", str(out), "--keyring", str(keyring))
    assert verified.returncode == ExitCode.OK, verified.stderr
    assert re.match(r"OK: cpu report signed by [0-9a-f]{16}, kit \S+, grade ", verified.stdout)
