"""``--resume`` trusts only the journal this run wrote (issue 12), attack by attack.

One real signed run of the cpu vendor is made per module; each test works on a copy "killed"
after some tests: a ``kill -9`` between two appends leaves exactly a prefix of the journal and no
report, which the copy reproduces without racing a real kill (test_runner_resume.py kills one).
The copies keep ``run.json`` byte for byte, so they share the run's id and its journal key.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from runner_helpers import FIXTURES, records_by_id, run_ckit

from kit.errors import ExitCode
from kit.results import Status, TestRecord
from kit.rundir import JOURNAL_NAME
from kit.runner.journal import encode_line, line_hash, run_id_of

pytestmark = pytest.mark.slow(seconds=70)

SELECT = "unit/opinfo/add/float32/?"  # OpInfo's samples 0-9: the variants only add time
REPORT_FILES = ("report.json", "junit.xml", "results.csv", "summary.md", "report.dsse.json")


@pytest.fixture(scope="module")
def journal_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A private config dir (journal keys, the signing key) shared by the module's runs."""
    home = tmp_path_factory.mktemp("journal-env")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(FIXTURES / "python"), *filter(None, [env.get("PYTHONPATH")])]
    )
    env["XDG_CONFIG_HOME"] = str(home / "config")
    env.pop("CKIT_SIGNING_KEY", None)
    keyring = ["--keyring", str(home / "keyring")]
    made = run_ckit(["keys", "generate", "--vendor", "cpu", *keyring], env, timeout=120)
    assert made.returncode == 0, made.stderr
    return env


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory, journal_env: dict[str, str]) -> Path:
    out = tmp_path_factory.mktemp("finished") / "run"
    ran = run_ckit(["run", "--vendor", "cpu", "--tier", "unit", "--select", SELECT,
                    "--out", str(out)], journal_env, timeout=600)
    # Narrowed by --select, so never "conformant"; every test of add passes: partial.
    assert ran.returncode == ExitCode.PARTIAL, ran.stderr
    return out


def _lines(out: Path) -> list[bytes]:
    return (out / JOURNAL_NAME).read_bytes().splitlines()


def _killed_after(finished_run: Path, tmp_path: Path, kept: int) -> Path:
    """A copy of the run as a kill -9 after ``kept`` journaled tests leaves it."""
    out = tmp_path / "run"
    shutil.copytree(finished_run, out)
    for name in REPORT_FILES:
        (out / name).unlink()
    (out / JOURNAL_NAME).write_bytes(b"".join(line + b"\n" for line in _lines(out)[:kept]))
    return out


def _journal_key(out: Path, env: dict[str, str]) -> bytes:
    run_id = run_id_of(out)
    return (Path(env["XDG_CONFIG_HOME"]) / "ckit" / "runs" / f"{run_id}.key").read_bytes()


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("ckit: error:")]


def _assert_refused(out: Path, env: dict[str, str], before: bytes, reason: str) -> None:
    """The resume stops with one line, changes no byte of the journal, writes no report."""
    resumed = run_ckit(["run", "--resume", str(out)], env, timeout=300)
    assert resumed.returncode == ExitCode.INPUT_ERROR, resumed.stderr
    errors = _error_lines(resumed.stderr)
    assert len(errors) == 1 and reason in errors[0], resumed.stderr
    assert (out / JOURNAL_NAME).read_bytes() == before
    assert not any((out / name).exists() for name in REPORT_FILES)


def _pass_fields(test_id: str, prev: str) -> dict[str, object]:
    return {"id": test_id, "status": "PASS", "duration_s": 0.1, "message": "", "details": {},
            "tier": "unit", "prev": prev}


def test_forged_pass_lines_appended_after_kill(
    finished_run: Path, tmp_path: Path, journal_env: dict[str, str]
) -> None:
    out = _killed_after(finished_run, tmp_path, kept=4)
    missing = sorted(set(records_by_id(finished_run)) - {
        json.loads(line)["id"] for line in _lines(out)
    })
    # The attacker recomputes the sha256 chain exactly; only the run's key is out of reach.
    head = line_hash(_lines(out)[-1])
    with (out / JOURNAL_NAME).open("ab") as journal:
        for test_id in missing:
            fields = _pass_fields(test_id, head)
            line = json.dumps({**fields, "hmac": hashlib.sha256(
                json.dumps(fields, sort_keys=True).encode()).hexdigest()}, sort_keys=True)
            journal.write(line.encode() + b"\n")
            head = line_hash(line.encode())
    _assert_refused(out, journal_env, (out / JOURNAL_NAME).read_bytes(), "MAC does not verify")


def test_torn_last_line_then_resume(
    finished_run: Path, tmp_path: Path, journal_env: dict[str, str]
) -> None:
    out = _killed_after(finished_run, tmp_path, kept=5)
    kept = (out / JOURNAL_NAME).read_bytes()
    torn_line = _lines(finished_run)[5]
    with (out / JOURNAL_NAME).open("ab") as journal:
        journal.write(torn_line[: len(torn_line) // 2])  # killed in the middle of the write

    resumed = run_ckit(["run", "--resume", str(out)], journal_env, timeout=600)

    assert resumed.returncode == ExitCode.PARTIAL, resumed.stderr
    warnings = [line for line in resumed.stderr.splitlines() if "torn last line" in line]
    assert len(warnings) == 1 and warnings[0].startswith("ckit: warning:")
    journal = (out / JOURNAL_NAME).read_bytes()
    assert journal.startswith(kept)  # the fragment was cut, nothing before it
    assert [json.loads(line)["id"] for line in journal.splitlines()].count(
        json.loads(torn_line)["id"]) == 1
    reported = {test_id: r["status"] for test_id, r in records_by_id(out).items()}
    assert reported == {test_id: r["status"] for test_id, r in records_by_id(finished_run).items()}


def test_line_dropped_from_middle(
    finished_run: Path, tmp_path: Path, journal_env: dict[str, str]
) -> None:
    out = _killed_after(finished_run, tmp_path, kept=5)
    lines = _lines(out)
    (out / JOURNAL_NAME).write_bytes(b"".join(line + b"\n" for line in lines[:1] + lines[2:]))
    _assert_refused(out, journal_env, (out / JOURNAL_NAME).read_bytes(), "removed or reordered")


def test_lines_reordered(finished_run: Path, tmp_path: Path, journal_env: dict[str, str]) -> None:
    out = _killed_after(finished_run, tmp_path, kept=5)
    lines = _lines(out)
    lines[1], lines[2] = lines[2], lines[1]
    (out / JOURNAL_NAME).write_bytes(b"".join(line + b"\n" for line in lines))
    _assert_refused(out, journal_env, (out / JOURNAL_NAME).read_bytes(), "removed or reordered")


def test_duplicate_record_for_one_test_copied_line(
    finished_run: Path, tmp_path: Path, journal_env: dict[str, str]
) -> None:
    out = _killed_after(finished_run, tmp_path, kept=5)
    with (out / JOURNAL_NAME).open("ab") as journal:
        journal.write(_lines(out)[0] + b"\n")  # a genuine line, replayed at the end
    _assert_refused(out, journal_env, (out / JOURNAL_NAME).read_bytes(), "removed or reordered")


def test_duplicate_record_for_one_test_even_with_the_key(
    finished_run: Path, tmp_path: Path, journal_env: dict[str, str]
) -> None:
    """No flow journals a test twice (finished tests are never queued again): a duplicate that
    verifies is a kit bug, and which record to believe is not the resume's guess to make."""
    out = _killed_after(finished_run, tmp_path, kept=5)
    first_id = json.loads(_lines(out)[0])["id"]
    record = TestRecord(first_id, Status.FAIL_NUMERIC, 0.1, "journaled twice")
    line = encode_line(record, line_hash(_lines(out)[-1]), _journal_key(out, journal_env))
    with (out / JOURNAL_NAME).open("ab") as journal:
        journal.write(line + b"\n")
    _assert_refused(out, journal_env, (out / JOURNAL_NAME).read_bytes(),
                    f"a second record for {first_id}")


@pytest.mark.parametrize("number", ["NaN", "Infinity", "1e999"])
def test_nan_duration_in_journal(
    finished_run: Path, tmp_path: Path, journal_env: dict[str, str], number: str
) -> None:
    out = _killed_after(finished_run, tmp_path, kept=5)
    missing = sorted(set(records_by_id(finished_run)) - {
        json.loads(line)["id"] for line in _lines(out)
    })
    # Signed with the run's key: the number itself is what must be refused.
    record = TestRecord(missing[0], Status.PASS, 0.125)
    line = encode_line(record, line_hash(_lines(out)[-1]), _journal_key(out, journal_env))
    with (out / JOURNAL_NAME).open("ab") as journal:
        journal.write(line.replace(b'"duration_s":0.125', f'"duration_s":{number}'.encode()))
        journal.write(b"\n")
    # Strict JSON refuses every spelling of a non-finite number, naming it.
    reason = f"number {number}"
    _assert_refused(out, journal_env, (out / JOURNAL_NAME).read_bytes(), reason)


def test_resume_of_finished_run_does_not_resign(
    finished_run: Path, tmp_path: Path, journal_env: dict[str, str]
) -> None:
    out = tmp_path / "run"
    shutil.copytree(finished_run, out)
    before = _snapshot(out)
    keys = Path(journal_env["XDG_CONFIG_HOME"]) / "ckit" / "runs"
    keys_before = _snapshot(keys)

    resumed = run_ckit(["run", "--resume", str(out)], journal_env, timeout=300)

    assert resumed.returncode == ExitCode.INPUT_ERROR, resumed.stderr
    lines = resumed.stderr.strip().splitlines()
    assert len(lines) == 1 and "finished" in lines[0], lines
    assert _snapshot(out) == before
    assert _snapshot(keys) == keys_before


def _snapshot(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(path.relative_to(directory)): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(directory.rglob("*")) if path.is_file()
    }
