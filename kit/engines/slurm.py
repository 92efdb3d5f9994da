"""The Slurm engine: a job array runs the shards, one job after it runs the merge.

Everything it writes goes under ``<root>/slurm/``: ``shards.sbatch`` (the array,
``--array=0-(N-1)``, each task running ``ShardedRun.shard_line("$SLURM_ARRAY_TASK_ID")``),
``merge.sbatch`` (``--dependency=afterany:<array id>``, running ``merge_line()``; afterany, so
the merge runs even when a shard failed and names that shard itself), each job's Slurm output,
and ``jobs.json`` (what was submitted, for ``ckit slurm status``). ``root`` must be storage
every node sees.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from kit.bounded_read import FileMissing, read_regular_file
from kit.engines.interface import ShardedRun
from kit.engines.template_text import check_sharded_run
from kit.errors import EnvironmentProblem, InputError
from kit.outfiles import make_real_dir, write_new_file
from kit.strict_json import loads_strict

SLURM_DIR = "slurm"
SHARDS_SCRIPT = "shards.sbatch"
MERGE_SCRIPT = "merge.sbatch"
JOBS_FILE = "jobs.json"
_JOBS_LIMIT = 64 * 1024


@dataclass(frozen=True)
class SlurmOptions:
    """What a lab sets for its cluster; every value is written as an ``#SBATCH`` line."""

    partition: str | None = None
    #: The accelerator each shard needs (``gpu:1``); the merge needs none.
    gres: str | None = None
    #: Slurm's time format (``2:00:00``), for each shard and the merge.
    time_limit: str | None = None
    #: A shell prefix that runs the command in the vendor image (``apptainer exec IMAGE``,
    #: ``srun --container-image=IMAGE``); the lab's own shell words, written as given.
    container_cmd: str | None = None
    #: Further ``#SBATCH`` options for both jobs (``--account=lab``, ``--qos=high``).
    sbatch_lines: tuple[str, ...] = ()
    job_name: str = "ckit"


@dataclass(frozen=True)
class SubmittedJobs:
    array_job_id: str
    merge_job_id: str
    shards: int
    root: str
    #: When the merge job was accepted (UTC, ISO 8601).
    submitted: str


def slurm_dir(root: str) -> Path:
    return Path(root) / SLURM_DIR


def _refuse_unsafe(value: str, what: str, *, spaces: bool) -> None:
    """A newline would start a new script line: an #SBATCH value must stay on its own."""
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise InputError(f"{what} {value!r} holds a control character (a newline?)")
    if not spaces and any(c.isspace() for c in value):
        raise InputError(f"{what} {value!r} holds a space; give one Slurm value")


def check_options(options: SlurmOptions) -> None:
    """Each #SBATCH value on one line of its own, and one word where Slurm takes one."""
    for value, what in (
        (options.partition, "partition"), (options.gres, "GRES"),
        (options.time_limit, "time limit"), (options.job_name, "job name"),
    ):
        if value is not None:
            _refuse_unsafe(value, what, spaces=False)
    if options.container_cmd is not None:
        _refuse_unsafe(options.container_cmd, "container command", spaces=True)
    for line in options.sbatch_lines:
        _refuse_unsafe(line, "#SBATCH line", spaces=True)


def _common_lines(options: SlurmOptions) -> list[str]:
    lines = [f"--partition={options.partition}"] if options.partition else []
    if options.time_limit:
        lines.append(f"--time={options.time_limit}")
    return [*lines, *options.sbatch_lines]


def _script(directives: Sequence[str], command: str, options: SlurmOptions) -> str:
    prefix = f"{options.container_cmd} " if options.container_cmd else ""
    header = "\n".join(f"#SBATCH {line}" for line in directives)
    return f"#!/bin/bash\n{header}\nset -euo pipefail\n{prefix}{command}\n"


def shards_script(run: ShardedRun, options: SlurmOptions) -> str:
    """The job array: task K runs shard K of N."""
    out = slurm_dir(run.root)
    directives = [
        f"--job-name={options.job_name}-shards",
        f"--array=0-{run.shards - 1}",
        f"--output={out}/shard-%a.out",
        *([f"--gres={options.gres}"] if options.gres else []),
        *_common_lines(options),
    ]
    return _script(directives, run.shard_line("$SLURM_ARRAY_TASK_ID"), options)


def merge_script(run: ShardedRun, options: SlurmOptions, array_job_id: str) -> str:
    """The merge: after every array task has ended, however it ended."""
    directives = [
        f"--job-name={options.job_name}-merge",
        f"--dependency=afterany:{array_job_id}",
        f"--output={slurm_dir(run.root)}/merge.out",
        *_common_lines(options),
    ]
    return _script(directives, run.merge_line(), options)


def _sbatch(sbatch: str, script: Path) -> str:
    """Submit ``script``; its job id (``--parsable`` prints ``id`` or ``id;cluster``)."""
    if shutil.which(sbatch) is None:
        raise EnvironmentProblem(f"{sbatch} not found: Slurm's client commands are not on PATH")
    done = subprocess.run(
        [sbatch, "--parsable", str(script)], capture_output=True, text=True, check=False
    )
    job_id = done.stdout.strip().split(";")[0]
    if done.returncode != 0 or not job_id.isdigit():
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise EnvironmentProblem(f"Slurm refused {script.name}: {why}")
    return job_id


def _scancel(job_id: str) -> None:
    subprocess.run(["scancel", job_id], capture_output=True, check=False)


def _prepare(run: ShardedRun, options: SlurmOptions) -> Path:
    check_sharded_run(run)
    if not Path(run.root).is_absolute():
        raise InputError(f"root {run.root} must be an absolute path every node sees")
    # The root is written into #SBATCH --output= lines, where a space ends the value.
    _refuse_unsafe(run.root, "root", spaces=False)
    check_options(options)
    Path(run.root).mkdir(parents=True, exist_ok=True)
    out = slurm_dir(run.root)
    make_real_dir(out)
    if (out / JOBS_FILE).exists():
        raise InputError(f"{run.root} already holds a submitted run; give a new root")
    return out


def submit(run: ShardedRun, options: SlurmOptions, sbatch: str = "sbatch") -> SubmittedJobs:
    """Write both scripts, submit the array, then the merge after it; record ``jobs.json``."""
    out = _prepare(run, options)
    shards = write_new_file(out / SHARDS_SCRIPT, shards_script(run, options).encode())
    array_job_id = _sbatch(sbatch, shards)
    merge = write_new_file(out / MERGE_SCRIPT, merge_script(run, options, array_job_id).encode())
    try:
        merge_job_id = _sbatch(sbatch, merge)
    except EnvironmentProblem as problem:
        _scancel(array_job_id)  # shards nobody merges would only hold the cluster
        raise EnvironmentProblem(f"{problem} (shard array {array_job_id} cancelled)") from None
    submitted = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    jobs = SubmittedJobs(array_job_id, merge_job_id, run.shards, run.root, submitted)
    write_new_file(out / JOBS_FILE, (json.dumps(asdict(jobs), indent=2) + "\n").encode())
    return jobs


def load_jobs(root: Path) -> SubmittedJobs:
    """The ``jobs.json`` that ``submit`` wrote under ``root``."""
    path = root / SLURM_DIR / JOBS_FILE
    try:
        data = read_regular_file(path, limit=_JOBS_LIMIT, what="jobs file")
    except FileMissing:
        raise InputError(f"{path} not found: {root} holds no Slurm submission") from None
    document = loads_strict(data, what=str(path), error=InputError)
    jobs = _jobs_from(document)
    if jobs is None:
        raise InputError(f"{path} is not a jobs file this kit wrote")
    return jobs


def _jobs_from(document: object) -> SubmittedJobs | None:
    """The jobs ``document`` names; None unless it has exactly the fields, of their types."""
    if not isinstance(document, dict) or set(document) != set(SubmittedJobs.__annotations__):
        return None
    jobs = SubmittedJobs(**document)
    ids = (jobs.array_job_id, jobs.merge_job_id)
    if not all(isinstance(i, str) and i.isdigit() for i in ids):
        return None
    if not isinstance(jobs.shards, int) or jobs.shards < 1:
        return None
    return jobs if isinstance(jobs.root, str) and isinstance(jobs.submitted, str) else None
