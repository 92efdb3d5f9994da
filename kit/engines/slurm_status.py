"""Where a submitted Slurm run stands: each shard's job state and report, the merge's.

States come from ``squeue --states=all``, which needs no accounting database (``sacct`` may be
unavailable). slurmctld forgets a finished job after ``MinJobAge`` (300 s by default; an hour in
``.ci/start-slurm``'s cluster): such a job is ``GONE``, and the files say how it ended.
"""

from __future__ import annotations

import enum
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from kit.engines.interface import MERGED_DIR, shard_dir_name
from kit.engines.slurm import SLURM_DIR, SubmittedJobs
from kit.errors import EnvironmentProblem
from kit.report.read import read_report
from kit.rundir import RunDir

#: Slurm no longer knows the job: it ended long enough ago, or slurmctld lost its state.
GONE = "GONE"
#: States after which a job never runs again (with GONE).
ENDED_STATES = frozenset({
    "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
    "BOOT_FAIL", "DEADLINE", "REVOKED", GONE,
})


class StatusExit(enum.IntEnum):
    """``ckit slurm status`` exit codes; apart from the kit's own (kit.errors.ExitCode) and
    the grades' (standard.yaml), so a pipeline can tell them apart."""

    #: The merge wrote its report (whatever its grade: the report says that).
    DONE = 0
    #: A shard or the merge is still pending or running.
    IN_PROGRESS = 20
    #: Every job ended and there is no merged report: a shard or the merge failed.
    FAILED = 21


@dataclass(frozen=True)
class ShardStatus:
    index: int
    state: str
    has_report: bool


@dataclass(frozen=True)
class MergeStatus:
    state: str
    has_report: bool
    #: The merged report's grade, once it is written.
    grade: str | None


class ShardStatusJson(TypedDict):
    index: int
    state: str
    report: bool


class MergeStatusJson(TypedDict):
    state: str
    report: bool
    grade: str | None


class RunStatusJson(TypedDict):
    """``ckit slurm status --json``."""

    root: str
    array_job_id: str
    merge_job_id: str
    shards: list[ShardStatusJson]
    merge: MergeStatusJson
    outcome: str
    exit_code: int


@dataclass(frozen=True)
class RunStatus:
    jobs: SubmittedJobs
    shards: tuple[ShardStatus, ...]
    merge: MergeStatus

    @property
    def outcome(self) -> StatusExit:
        states = [shard.state for shard in self.shards] + [self.merge.state]
        if any(state not in ENDED_STATES for state in states):
            return StatusExit.IN_PROGRESS
        return StatusExit.DONE if self.merge.has_report else StatusExit.FAILED

    def to_json(self) -> RunStatusJson:
        return {
            "root": self.jobs.root,
            "array_job_id": self.jobs.array_job_id,
            "merge_job_id": self.jobs.merge_job_id,
            "shards": [
                {"index": s.index, "state": s.state, "report": s.has_report} for s in self.shards
            ],
            "merge": {
                "state": self.merge.state, "report": self.merge.has_report,
                "grade": self.merge.grade,
            },
            "outcome": self.outcome.name.lower().replace("_", "-"),
            "exit_code": int(self.outcome),
        }


def _squeue(job_id: str) -> dict[str, str]:
    """Each task's state (by array index; ``N/A`` for a plain job); empty when Slurm forgot it."""
    if shutil.which("squeue") is None:
        raise EnvironmentProblem("squeue not found: Slurm's client commands are not on PATH")
    done = subprocess.run(
        ["squeue", "--states=all", "--array", "--noheader", "--format=%K|%T", f"--jobs={job_id}"],
        capture_output=True, text=True, check=False,
    )
    if done.returncode != 0:
        if "Invalid job id" in done.stderr:
            return {}
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise EnvironmentProblem(f"squeue failed: {why}")
    pairs = (line.split("|", 1) for line in done.stdout.splitlines() if "|" in line)
    return {index.strip(): state.strip() for index, state in pairs}


def _merge_status(jobs: SubmittedJobs) -> MergeStatus:
    state = next(iter(_squeue(jobs.merge_job_id).values()), GONE)
    merged = Path(jobs.root) / MERGED_DIR
    has_report = RunDir(merged).has_report()  # report.json or a body, as the standard wrote
    grade = read_report(merged).report.grade.name if has_report else None
    return MergeStatus(state, has_report, grade)


def run_status(jobs: SubmittedJobs) -> RunStatus:
    tasks = _squeue(jobs.array_job_id)
    shards = tuple(
        ShardStatus(
            index=k,
            state=tasks.get(str(k), GONE),
            has_report=RunDir(Path(jobs.root) / shard_dir_name(str(k), jobs.shards))
            .has_report(),
        )
        for k in range(jobs.shards)
    )
    # The merge is asked after the shards: it can only be further along than they were.
    return RunStatus(jobs, shards, _merge_status(jobs))


def slurm_output(root: str, name: str) -> Path:
    """A job's Slurm output file (``shard-K.out``, ``merge.out``), where the scripts put it."""
    return Path(root) / SLURM_DIR / name
