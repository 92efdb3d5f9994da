"""``ckit slurm submit`` and ``ckit slurm status``: a sharded run on a Slurm cluster.

``submit`` writes and submits a job array (one task per shard) and a merge job after it
(``kit.engines.slurm``); ``status`` says where each stands. Status exits 0 once the merge wrote
its report, 20 while a job is pending or running, 21 when every job ended without a merged
report (``kit.engines.slurm_status.StatusExit``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from kit.cli import add_command, help_when_no_action
from kit.engines.interface import MERGED_DIR, ShardedRun
from kit.engines.slurm import SlurmOptions, load_jobs, submit
from kit.engines.slurm_status import RunStatus, StatusExit, run_status
from kit.errors import ExitCode, InputError
from kit.printable import printable

_POLL_S = 2.0


def _run_args(extra: list[str]) -> tuple[str, ...]:
    """The ``ckit run`` options after ``--`` (argparse keeps the ``--`` itself)."""
    return tuple(extra[1:] if extra[:1] == ["--"] else extra)


def _submit(args: argparse.Namespace) -> int:
    if args.shards < 1:
        raise InputError(f"--shards must be at least 1, not {args.shards}")
    run = ShardedRun(
        vendor=args.vendor, shards=args.shards, root=str(args.root.resolve()),
        run_args=_run_args(args.run_args), sign=not args.no_sign, ckit=args.ckit,
        keyring=args.keyring,
    )
    options = SlurmOptions(
        partition=args.partition, gres=args.gres, time_limit=args.time,
        container_cmd=args.container_cmd, sbatch_lines=tuple(args.sbatch_line),
    )
    jobs = submit(run, options)
    print(printable(f"submitted: shard array job {jobs.array_job_id} ({jobs.shards} shards), "
                    f"merge job {jobs.merge_job_id}"))
    print(printable(f"merged report: {run.root}/{MERGED_DIR}; ckit slurm status {run.root}"))
    if not args.wait:
        return ExitCode.OK
    return _wait_and_report(Path(run.root), args.timeout, as_json=False)


def _lines(status: RunStatus) -> list[str]:
    jobs = status.jobs
    lines = [f"Slurm run {jobs.root}: shard array job {jobs.array_job_id}, "
             f"merge job {jobs.merge_job_id}"]
    for shard in status.shards:
        report = "report written" if shard.has_report else "no report"
        lines.append(f"  shard {shard.index}: {shard.state}, {report}")
    merge = status.merge
    merged = f"merged report, grade {merge.grade}" if merge.has_report else "no merged report"
    lines.append(f"  merge: {merge.state}, {merged}")
    verdicts = {
        StatusExit.DONE: f"done: merged report in {jobs.root}/{MERGED_DIR}",
        StatusExit.IN_PROGRESS: "in progress",
        StatusExit.FAILED: f"failed: every job ended without a merged report; see "
                           f"{jobs.root}/slurm/merge.out",
    }
    return [*lines, verdicts[status.outcome]]


def _print(status: RunStatus, as_json: bool) -> None:
    if as_json:
        # json.dumps escapes every control and non-ASCII character inside strings.
        print(json.dumps(status.to_json(), indent=2))
        return
    for line in _lines(status):
        print(printable(line))


def _wait_and_report(root: Path, timeout: float | None, as_json: bool) -> int:
    jobs = load_jobs(root)
    deadline = None if timeout is None else time.monotonic() + timeout
    status = run_status(jobs)
    while status.outcome is StatusExit.IN_PROGRESS:
        if deadline is not None and time.monotonic() >= deadline:
            _print(status, as_json)
            print(f"ckit: still in progress after {timeout:g}s", file=sys.stderr)
            return StatusExit.IN_PROGRESS
        time.sleep(_POLL_S)
        status = run_status(jobs)
    _print(status, as_json)
    return status.outcome


def _status(args: argparse.Namespace) -> int:
    if not args.wait:
        status = run_status(load_jobs(args.root))
        _print(status, args.json)
        return status.outcome
    return _wait_and_report(args.root, args.timeout, args.json)


def _wait_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wait", action="store_true", help="poll until every job has ended"
    )
    parser.add_argument(
        "--timeout", type=float, metavar="S",
        help="with --wait: give up after S seconds (exit 20, still in progress)",
    )


def _register_submit(actions: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        actions, "submit",
        "submit a sharded run: a job array of N shards, then a merge job after them",
        [
            "ckit slurm submit --vendor acme --shards 8 --root /shared/ckit/run1 "
            "--partition gpu --gres gpu:1 --time 2:00:00",
            "ckit slurm submit --vendor acme --shards 4 --root /shared/run2 "
            "--container-cmd 'apptainer exec --nv /shared/acme.sif' -- --tier unit",
        ],
    )
    parser.add_argument("--vendor", required=True, help="vendor id (as for ckit run)")
    parser.add_argument("--shards", type=int, required=True, metavar="N", help="shard count")
    parser.add_argument(
        "--root", type=Path, required=True, metavar="DIR",
        help="shared storage every node sees: shard-K-of-N/, merged/ and slurm/ go under it",
    )
    parser.add_argument("--partition", help="Slurm partition for every job")
    parser.add_argument("--gres", help="GRES each shard needs, such as gpu:1")
    parser.add_argument("--time", help="time limit for each job, in Slurm's format (2:00:00)")
    parser.add_argument(
        "--container-cmd", metavar="CMD",
        help="shell prefix that runs ckit in the vendor image, such as 'apptainer exec IMAGE' "
        "or 'srun --container-image=IMAGE' (pyxis)",
    )
    parser.add_argument(
        "--sbatch-line", action="append", default=[], metavar="LINE",
        help="a further #SBATCH option for both jobs, such as --account=lab (repeatable)",
    )
    parser.add_argument(
        "--no-sign", action="store_true", help="the merge writes an unsigned report"
    )
    parser.add_argument(
        "--keyring", metavar="DIR",
        help="keyring the merge checks each shard's signature with (default: the kit's "
        "signing/keyring on the node); shards sign with the vendor's key",
    )
    parser.add_argument(
        "--ckit", default="ckit", metavar="PATH",
        help="the ckit executable on the nodes (default: ckit on their PATH)",
    )
    _wait_options(parser)
    parser.add_argument(
        "run_args", nargs=argparse.REMAINDER, metavar="-- RUN_OPTIONS",
        help="further ckit run options for every shard (--tier, --select, --durations)",
    )
    parser.set_defaults(handler=_submit)


def _register_status(actions: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        actions, "status",
        "each shard's Slurm state and report, the merge's state and the merged grade; exit 0 "
        "when merged, 20 while in progress, 21 when it ended without a merged report",
        ["ckit slurm status /shared/ckit/run1", "ckit slurm status /shared/ckit/run1 --wait"],
    )
    parser.add_argument("root", type=Path, metavar="ROOT", help="the --root given to submit")
    parser.add_argument("--json", action="store_true", help="print JSON")
    _wait_options(parser)
    parser.set_defaults(handler=_status)



def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers, "slurm",
        "run the shards of a run as a Slurm job array and merge them in a job after it",
        ["ckit slurm submit --vendor acme --shards 8 --root /shared/run1 --gres gpu:1",
         "ckit slurm status /shared/run1"],
    )
    help_when_no_action(parser)
    actions = parser.add_subparsers(dest="slurm_command", metavar="ACTION")
    _register_submit(actions)
    _register_status(actions)
