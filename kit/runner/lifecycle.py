"""A run directory's life: claimed and pinned when a run starts, checked against its pins when
it resumes, and the plan written for the workers to collect."""

from __future__ import annotations

import datetime as dt
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from kit.errors import InputError
from kit.rundir import PLANNED_IDS, RunDir, is_evidence_name
from kit.runner.config import RunConfig, load_run_file, save_run_file
from kit.runner.inputs import RunInputs, load_inputs, pins_of
from kit.runner.journal import run_id_of, run_key_path
from kit.runner.outdir import check_run_dir_layout, claim_new_out_dir, refuse_finished_run


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def prepare_new_run(config: RunConfig, inputs: RunInputs) -> str:
    """Write ``run.json`` into a new or empty output directory; returns the start time."""
    claim_new_out_dir(config.out_dir)  # never a run (or anything else) already there
    started_at = _now()
    save_run_file(config.out_dir, config, pins_of(inputs), started_at)
    return started_at


def abandon_unstarted_run(out_dir: Path, *, created: bool) -> bool:
    """Take back what ``prepare_new_run`` wrote when the run failed before its first verdict
    (a vendor module that does not import, a missing device): the same command may then run
    again with the same ``--out`` instead of being refused as a run to resume. A run that
    journaled anything keeps its directory, to resume. Returns whether it took it back."""
    run_dir = RunDir(out_dir)
    if run_dir.journal.exists() and run_dir.journal.stat().st_size:
        return False
    try:
        run_id = run_id_of(out_dir)
    except InputError:
        run_id = None
    for path in (run_dir.journal, run_dir.run_file):
        path.unlink(missing_ok=True)
    for directory in (run_dir.workers, run_dir.golden):
        shutil.rmtree(directory, ignore_errors=True)
    if run_id is not None:
        run_key_path(run_id).unlink(missing_ok=True)
    if created and not any(out_dir.iterdir()):
        out_dir.rmdir()
    return True


def prepare_resume(out_dir: Path) -> tuple[RunConfig, RunInputs, str]:
    """The run in ``out_dir`` as it started, refused where anything it pinned changed since or
    it has finished."""
    check_run_dir_layout(out_dir)
    config, pins, started_at = load_run_file(out_dir)
    inputs = load_inputs(config)
    current = pins_of(inputs)
    for name, value in pins.items():
        if name == "environment" and current.get(name) != value:
            where = "on the host" if value == "host" else "inside a reference container"
            raise InputError(
                f"{out_dir}: cannot resume here: the run started {where} and must finish "
                "there; start a new run with another --out"
            )
        if current.get(name) != value:
            raise InputError(
                f"{out_dir}: cannot resume: {name.replace('_', ' ')} changed since the run "
                "started; start a new run with another --out"
            )
    refuse_finished_run(out_dir)
    return config, inputs, started_at


def write_planned_ids(run_dir: RunDir, planned: Iterable[str]) -> Path:
    """The plan, for the workers to collect only it (a resumed run writes it again)."""
    path = run_dir.workers / PLANNED_IDS
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{test_id}\n" for test_id in planned), encoding="utf-8")
    return path


#: Set to 1, a finished run keeps its evidence files: to judge a test again by hand.
KEEP_EVIDENCE_ENV = "CKIT_KEEP_EVIDENCE"


def remove_evidence(run_dir: RunDir) -> int:
    """Delete the evidence files under ``workers/`` once every verdict is journaled (unless
    ``KEEP_EVIDENCE_ENV`` says keep them); the bytes freed. Nothing a later command reads is
    among them (``--resume`` refuses a finished run and reruns a test whose verdict is not
    journaled; ``--rerun-failed``, show and diff read the report; repro reads the logs), and one
    scale test's evidence is hundreds of MB."""
    if os.environ.get(KEEP_EVIDENCE_ENV) == "1":
        return 0
    freed = 0
    try:
        entries = list(os.scandir(run_dir.workers))
    except FileNotFoundError:
        return 0
    for entry in entries:
        if is_evidence_name(entry.name) and entry.is_file(follow_symlinks=False):
            freed += entry.stat(follow_symlinks=False).st_size
            os.unlink(entry.path)
    return freed
