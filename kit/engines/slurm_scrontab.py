"""The periodic canary on a Slurm cluster, as a ``scrontab`` entry.

``scrontab`` (Slurm 20.11 and later, where ``slurm.conf`` has ``ScronParameters=enable``) is
Slurm's own cron: the controller submits the entry's command as a batch job at each time the
cron fields name, with the ``#SCRON`` lines above it as that job's ``sbatch`` options, so the
accounting, limits and queues an admin set apply to every night's run and ``scontrol``/``squeue``
show it. A self-resubmitting ``sbatch`` would do the same outside the admin's sight (a broken
chain stops silently, a doubled one runs twice), which is why the kit writes this form.

The entry's command is one line: the newest torch on the nightly index, ``ckit run --canary``
into ``<root>/canary-<job id>`` and its comment there (``kit.engines.canary.periodic_lines``).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from kit.engines.canary import CanaryRun, check_canary_run, check_cron, periodic_lines
from kit.engines.slurm import SLURM_DIR, SlurmOptions, check_options
from kit.errors import InputError

#: The run's directory: ``CanaryRun.out`` names it; the job id makes each night's its own.
OUT_VARIABLE = "CKIT_OUT"


@dataclass(frozen=True)
class ScrontabOptions:
    slurm: SlurmOptions
    #: Storage every node sees: each night's run and Slurm's output go under it.
    root: str
    cron: str = "0 3 * * *"


def _given(run: CanaryRun, options: ScrontabOptions) -> list[tuple[str, str]]:
    """Every value the command line carries, with the option that gave it."""
    return [
        (options.root, "--root"), (run.baseline, "--baseline"), (run.ckit, "--ckit"),
        (run.python, "--python"), (run.index, "--torch-index"),
        (options.slurm.container_cmd or "", "--container-cmd"), (run.key or "", "--canary-key"),
        *((arg, "ckit run option") for arg in run.run_args),
    ]


def _check(run: CanaryRun, options: ScrontabOptions) -> None:
    check_canary_run(run)
    check_options(options.slurm)
    check_cron(options.cron)
    for path, option in ((options.root, "--root"), (run.baseline, "--baseline")):
        if not path.startswith("/"):
            raise InputError(f"{option}: {path!r} must be an absolute path every node sees")
    for value, option in _given(run, options):
        if any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise InputError(f"{option}: {value!r} holds a control character (a newline?)")
        if "%" in value:
            # cron ends a command at a '%' and hands the rest to it as its standard input.
            raise InputError(f"{option}: {value!r} holds '%', which a crontab command line "
                             "reads as a newline; leave it out")
    if any(c.isspace() for c in options.root):
        raise InputError(f"--root: {options.root!r} holds a space; give one Slurm value")


def _directives(options: ScrontabOptions) -> list[str]:
    slurm = options.slurm
    return [
        f"--job-name={slurm.job_name}",
        f"--output={options.root}/{SLURM_DIR}/canary-%j.out",
        *([f"--partition={slurm.partition}"] if slurm.partition else []),
        *([f"--gres={slurm.gres}"] if slurm.gres else []),
        *([f"--time={slurm.time_limit}"] if slurm.time_limit else []),
        *slurm.sbatch_lines,
    ]


def scrontab_command(run: CanaryRun, options: ScrontabOptions) -> str:
    dated = f"{OUT_VARIABLE}={shlex.quote(options.root)}/canary-$SLURM_JOB_ID"
    script = "; ".join(["set -u", *periodic_lines(run, dated)])
    prefix = f"{options.slurm.container_cmd} " if options.slurm.container_cmd else ""
    return f"{prefix}bash -c {shlex.quote(script)}"


def render_scrontab(run: CanaryRun, options: ScrontabOptions) -> str:
    _check(run, options)
    header = [
        f"ckit canary of vendor {run.vendor}: the newest torch on {run.index},",
        f"each run in {options.root}/canary-<job id> with its comment against {run.baseline}.",
        "Add to your scrontab (`scrontab -e`; `scrontab FILE` replaces the whole table).",
        f"Slurm writes each night's output under {options.root}/{SLURM_DIR}/ (create it first).",
    ]
    lines = [*(f"# {line}" for line in header),
             *(f"#SCRON {directive}" for directive in _directives(options)),
             f"{options.cron} {scrontab_command(run, options)}"]
    return "\n".join(lines) + "\n"
