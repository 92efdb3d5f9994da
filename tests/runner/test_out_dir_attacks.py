"""Hostile output directories: each test is named after the attack it stops (issue 12).

Whatever ``--out`` holds before the run (planted links, another run's report) must be refused
with ONE ``ckit: error:`` line and exit code 3, leaving every file as it was and writing nothing
outside ``--out``. The CLI cases are refused before any worker starts, so they are quick.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from pathlib import Path

import pytest
from runner_helpers import run_ckit

from kit.clock import RunDate
from kit.errors import ExitCode, InputError
from kit.formats.files import write_report_files
from kit.outfiles import make_real_dir, open_for_append, write_new_file
from kit.rundir import JOURNAL_NAME, RUN_FILE, RunDir, finished_report_names
from kit.runner.config import RunConfig, save_run_file
from kit.runner.inputs import load_inputs
from kit.runner.journal import run_id_of, run_key_path
from kit.runner.lifecycle import abandon_unstarted_run, prepare_new_run
from kit.runner.outdir import claim_new_out_dir

CLI_TIMEOUT_S = 300


def _new_run_args(out: Path) -> list[str]:
    return ["run", "--vendor", "cpu", "--tier", "unit", "--select", "unit/opinfo/add/float32/0",
            "--no-sign", "--out", str(out)]


def _assert_refused(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == ExitCode.INPUT_ERROR, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("ckit: error: ")
    for fragment in fragments:
        assert fragment in lines[0], f"{fragment!r} not in {lines[0]!r}"


def _snapshot(directory: Path) -> dict[str, tuple[bytes | str, int]]:
    """Every entry's content (or link target) and mtime, links not followed."""
    state: dict[str, tuple[bytes | str, int]] = {}
    for entry in sorted(directory.iterdir()):
        info = entry.lstat()
        content = os.readlink(entry) if entry.is_symlink() else entry.read_bytes()
        state[entry.name] = (content, info.st_mtime_ns)
    return state


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """Where a planted link points: the run must never create anything here."""
    target = tmp_path / "outside"
    target.mkdir()
    return target


def _prepare(out: Path) -> Path:
    config = RunConfig(vendor="cpu", tiers=("unit",), select=("unit/opinfo/add/float32/0",),
                       timeout_s=None, workers=1, out_dir=out, sign=False, key_path=None,
                       clock=RunDate(dt.date(2026, 1, 1)))
    prepare_new_run(config, load_inputs(config))
    return out


@pytest.fixture
def started_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run directory as ``ckit run`` leaves it when killed before its first test."""
    monkeypatch.delenv("CKIT_CONTAINER", raising=False)
    return _prepare(tmp_path / "run")


def test_a_run_that_never_started_gives_back_the_users_empty_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What ``ckit run`` does when the device is missing (``test_runner_faults``): the
    directory the user made stays, empty; the run's key goes with its run.json."""
    monkeypatch.delenv("CKIT_CONTAINER", raising=False)
    made_by_user = tmp_path / "empty"
    made_by_user.mkdir()
    _prepare(made_by_user)
    key = run_key_path(run_id_of(made_by_user))
    key.parent.mkdir(parents=True, exist_ok=True)
    key.write_bytes(bytes(32))
    assert abandon_unstarted_run(made_by_user, created=False)
    assert made_by_user.is_dir() and not list(made_by_user.iterdir())
    assert not key.exists()


def test_a_run_with_a_verdict_is_never_given_back(started_run: Path) -> None:
    """Whatever fails after the first verdict, the run stays resumable."""
    RunDir(started_run).journal.write_text('{"a verdict": true}\n')
    assert not abandon_unstarted_run(started_run, created=True)
    assert RunDir(started_run).run_file.exists()


# -- a new run ---------------------------------------------------------------------------------


def test_dangling_journal_symlink_in_out(
    tmp_path: Path, outside: Path, ckit_env: dict[str, str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / JOURNAL_NAME).symlink_to(outside / "journal-target")
    result = run_ckit(_new_run_args(out), ckit_env, timeout=CLI_TIMEOUT_S)
    _assert_refused(result, str(out), "not empty", repr(JOURNAL_NAME), "--resume")
    assert not list(outside.iterdir())
    assert os.readlink(out / JOURNAL_NAME) == str(outside / "journal-target")  # left as it was


def test_dangling_run_json_symlink_in_out(
    tmp_path: Path, outside: Path, ckit_env: dict[str, str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / RUN_FILE).symlink_to(outside / "run-target.json")
    result = run_ckit(_new_run_args(out), ckit_env, timeout=CLI_TIMEOUT_S)
    _assert_refused(result, str(out), "not empty", repr(RUN_FILE))
    assert not list(outside.iterdir())
    assert os.readlink(out / RUN_FILE) == str(outside / "run-target.json")


def test_out_dir_holds_another_report(tmp_path: Path, ckit_env: dict[str, str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    for name in finished_report_names():
        (out / name).write_text(f"another run's {name}\n")
    before = _snapshot(out)
    result = run_ckit(_new_run_args(out), ckit_env, timeout=CLI_TIMEOUT_S)
    _assert_refused(result, str(out), "not empty", "--resume")
    assert _snapshot(out) == before


def test_out_is_a_dangling_symlink(
    tmp_path: Path, outside: Path, ckit_env: dict[str, str]
) -> None:
    out = tmp_path / "out"
    out.symlink_to(outside / "made-by-the-run")
    result = run_ckit(_new_run_args(out), ckit_env, timeout=CLI_TIMEOUT_S)
    _assert_refused(result, str(out), "symbolic link")
    assert not list(outside.iterdir())


def test_out_is_a_regular_file(tmp_path: Path, ckit_env: dict[str, str]) -> None:
    out = tmp_path / "notes.txt"
    out.write_text("keep me\n")
    _assert_refused(run_ckit(_new_run_args(out), ckit_env, timeout=CLI_TIMEOUT_S), str(out))
    assert out.read_text() == "keep me\n"


# -- a resumed run -----------------------------------------------------------------------------


@pytest.mark.parametrize("planted", [JOURNAL_NAME, "workers"])
def test_symlink_planted_in_a_run_being_resumed(
    started_run: Path, outside: Path, ckit_env: dict[str, str], planted: str
) -> None:
    (started_run / planted).symlink_to(outside)
    result = run_ckit(["run", "--resume", str(started_run)], ckit_env, timeout=CLI_TIMEOUT_S)
    _assert_refused(result, str(started_run / planted), "cannot be resumed")
    assert not list(outside.iterdir())


def test_run_json_swapped_for_a_symlink_before_resume(
    started_run: Path, outside: Path, ckit_env: dict[str, str]
) -> None:
    real = outside / RUN_FILE
    (started_run / RUN_FILE).rename(real)
    (started_run / RUN_FILE).symlink_to(real)
    result = run_ckit(["run", "--resume", str(started_run)], ckit_env, timeout=CLI_TIMEOUT_S)
    _assert_refused(result, RUN_FILE, "cannot be resumed")


def test_resume_of_a_directory_that_holds_no_run(tmp_path: Path, ckit_env: dict[str, str]) -> None:
    result = run_ckit(["run", "--resume", str(tmp_path)], ckit_env, timeout=CLI_TIMEOUT_S)
    _assert_refused(result, "holds no run to resume")


def test_resume_over_a_finished_report(started_run: Path, ckit_env: dict[str, str]) -> None:
    for name in finished_report_names():
        (started_run / name).write_text(f"the finished run's {name}\n")
    before = _snapshot(started_run)
    result = run_ckit(["run", "--resume", str(started_run)], ckit_env, timeout=CLI_TIMEOUT_S)
    _assert_refused(result, str(started_run), "finished", "report.json")
    assert _snapshot(started_run) == before


# -- links planted after the checks: every write itself refuses to follow one -----------------


def test_journal_open_refuses_a_dangling_symlink(tmp_path: Path, outside: Path) -> None:
    (tmp_path / JOURNAL_NAME).symlink_to(outside / "journal-target")
    with pytest.raises(InputError, match="symbolic link"):
        open_for_append(tmp_path / JOURNAL_NAME)  # how the journal opens its file
    assert not list(outside.iterdir())


def test_run_file_write_refuses_a_dangling_symlink(tmp_path: Path, outside: Path) -> None:
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / RUN_FILE).symlink_to(outside / "run-target.json")
    config = RunConfig(vendor="cpu", tiers=("unit",), select=(), timeout_s=None, workers=1,
                       out_dir=fresh, sign=False, key_path=None,
                       clock=RunDate(dt.date(2026, 1, 1)))
    with pytest.raises(InputError, match="already exists"):
        save_run_file(fresh, config, {}, "2026-01-01T00:00:00+00:00")
    assert not list(outside.iterdir())


def test_report_write_refuses_a_planted_envelope_link(tmp_path: Path, outside: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.dsse.json").symlink_to(outside / "envelope")
    with pytest.raises(InputError, match="report.dsse.json"):
        write_report_files({"not": "rendered"}, out)  # refused before rendering matters
    assert [p.name for p in out.iterdir()] == ["report.dsse.json"]
    assert not list(outside.iterdir())


def test_worker_log_dir_refuses_a_symlink(tmp_path: Path, outside: Path) -> None:
    (tmp_path / "workers").symlink_to(outside)
    with pytest.raises(InputError, match="not a directory"):
        make_real_dir(tmp_path / "workers")


def test_new_file_never_replaces_an_existing_one(tmp_path: Path) -> None:
    kept = tmp_path / "report.json"
    kept.write_text("kept\n")
    with pytest.raises(InputError, match="already exists"):
        write_new_file(kept, b"replacement\n")
    assert kept.read_text() == "kept\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temp file left


def test_new_or_empty_out_dir_is_accepted(tmp_path: Path) -> None:
    claim_new_out_dir(tmp_path / "new" / "nested")
    (tmp_path / "empty").mkdir()
    claim_new_out_dir(tmp_path / "empty")
    assert (tmp_path / "new" / "nested").is_dir()
