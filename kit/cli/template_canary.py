"""``ckit template github-canary|kubernetes-cronjob|slurm-scrontab``: the canary CI modes.

The RFC's event-triggered mode (an upstream pull request dispatches the run, the comment goes
back to it) and its periodic mode (a nightly run against the nightly torch, for a dashboard), as
the workflow, CronJob or scrontab entry a vendor installs (``kit.engines.canary``).

A canary is unsigned unless asked (``--canary-key PATH``, for Kubernetes ``--canary-key-secret
NAME``), and then signed with a separate canary key, never the vendor's signing key.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from kit.cli import add_command
from kit.engines.canary import CANARY_KEY_NAME, NIGHTLY_INDEX, WHEEL_HOST, CanaryRun
from kit.engines.github_canary import OUT as GITHUB_OUT
from kit.engines.github_canary import GithubCanaryOptions, render_github_canary
from kit.engines.kube_names import DeviceResource
from kit.engines.kubernetes_cronjob import OUT_VARIABLE as KUBE_OUT
from kit.engines.kubernetes_cronjob import (
    CronJobOptions,
    canary_key_path,
    render_canary_cronjob,
)
from kit.engines.slurm import SlurmOptions
from kit.engines.slurm_scrontab import OUT_VARIABLE as SLURM_OUT
from kit.engines.slurm_scrontab import ScrontabOptions, render_scrontab
from kit.errors import InputError

GITHUB_CANARY = "github-canary"
KUBERNETES_CRONJOB = "kubernetes-cronjob"
SLURM_SCRONTAB = "slurm-scrontab"
#: ``make install`` puts ckit and its interpreter in the checkout's venv; an image or a
#: cluster's environment has them on PATH.
DEFAULT_TOOLS = {
    GITHUB_CANARY: (".venv/bin/ckit", ".venv/bin/python"),
    KUBERNETES_CRONJOB: ("ckit", "python"),
    SLURM_SCRONTAB: ("ckit", "python"),
}
#: Where each kind's run directory is, as its shell reads it.
OUT_WORD = {GITHUB_CANARY: GITHUB_OUT, KUBERNETES_CRONJOB: f'"${KUBE_OUT}"',
            SLURM_SCRONTAB: f'"${SLURM_OUT}"'}
DEFAULT_CRON = "0 3 * * *"
Handler = Callable[[argparse.Namespace], int]


def _canary_key(args: argparse.Namespace) -> str | None:
    """The separate canary key's path where the job runs, or None: unsigned (the default)."""
    if args.engine == KUBERNETES_CRONJOB:
        return canary_key_path(args.vendor) if args.canary_key_secret else None
    key: str | None = args.canary_key
    return key


def _canary_run(args: argparse.Namespace) -> CanaryRun:
    ckit, python = DEFAULT_TOOLS[args.engine]
    return CanaryRun(
        vendor=args.vendor, ckit=args.ckit or ckit, python=args.python or python,
        out=OUT_WORD[args.engine], baseline=args.baseline, run_args=tuple(args.run_args),
        index=args.torch_index, wheel_host=getattr(args, "wheel_host", WHEEL_HOST),
        key=_canary_key(args),
    )


def _name(args: argparse.Namespace) -> str:
    return str(args.name or f"ckit-canary-{args.vendor}")


def _github(args: argparse.Namespace) -> str:
    run = _canary_run(args)
    options = GithubCanaryOptions(
        runner_labels=tuple(args.runner_label or [run.vendor]),
        install=tuple(args.install or ("make install", f"{run.ckit} vendors install "
                                       f"{run.vendor}")),
        workflow_name=_name(args), upstream=args.upstream, token_secret=args.token_secret,
        cron=args.cron,
    )
    return render_github_canary(run, options)


def _kubernetes(args: argparse.Namespace) -> str:
    if not args.image:
        raise InputError(f"{KUBERNETES_CRONJOB}: --image is required (the vendor's image with "
                         "the kit and its stack installed)")
    if args.key_secret is not None:
        raise InputError(
            f"{KUBERNETES_CRONJOB}: --key-secret would mount the vendor's signing key in a pod "
            "that installs an untrusted torch; a canary is unsigned, or signed with a separate "
            "canary key: --canary-key-secret NAME"
        )
    options = CronJobOptions(
        name=_name(args), image=args.image, device=DeviceResource.parse(args.resource),
        pvc=args.pvc, root=args.root, canary_key_secret=args.canary_key_secret, cron=args.cron,
    )
    return render_canary_cronjob(_canary_run(args), options)


def _slurm(args: argparse.Namespace) -> str:
    slurm = SlurmOptions(
        partition=args.partition, gres=args.gres, time_limit=args.time,
        container_cmd=args.container_cmd, sbatch_lines=tuple(args.sbatch_line),
        job_name=_name(args),
    )
    return render_scrontab(_canary_run(args), ScrontabOptions(slurm, args.root, args.cron))


def _add_common(parser: argparse.ArgumentParser, engine: str, handler: Handler,
                render: Callable[[argparse.Namespace], str]) -> None:
    ckit, python = DEFAULT_TOOLS[engine]
    parser.add_argument("--vendor", required=True, help="vendor id (vendors/<id>)")
    parser.add_argument(
        "--baseline", required=True, metavar="DIR",
        help="the vendor's last certified run directory where the job runs: the comment lists "
        "the tests that regressed against it",
    )
    parser.add_argument("--name", metavar="NAME",
                        help="workflow or job name (default ckit-canary-<vendor>)")
    parser.add_argument("--ckit", metavar="PATH", help=f"the ckit executable (default {ckit})")
    parser.add_argument("--python", metavar="PATH",
                        help=f"the interpreter ckit runs in, where the torch goes (default "
                        f"{python})")
    parser.add_argument("--torch-index", default=NIGHTLY_INDEX, metavar="URL",
                        help=f"the index torch comes from (default {NIGHTLY_INDEX})")
    parser.add_argument("--cron", default=DEFAULT_CRON, metavar="FIELDS",
                        help=f"when the periodic run starts, five cron fields, UTC (default "
                        f"{DEFAULT_CRON!r})")
    parser.add_argument("--no-sign", action="store_true",
                        help="the canary's report unsigned: the default, kept for old scripts")
    parser.add_argument("--out", type=Path, metavar="FILE",
                        help="write the template to FILE (never overwritten)")
    parser.add_argument("run_args", nargs="*", metavar="-- RUN_OPTION",
                        help="after --: further ckit run options (--tier, --select, ...)")
    parser.set_defaults(handler=handler, engine=engine, render=render)


def _add_github(engines: argparse._SubParsersAction, handler: Handler) -> None:  # type: ignore[type-arg]
    parser = add_command(
        engines, GITHUB_CANARY,
        "a workflow: a canary run dispatched by an upstream pull request (commented back) "
        "and a nightly one",
        [f"ckit template {GITHUB_CANARY} --vendor acme --runner-label acme-npu --baseline "
         "/srv/ckit/acme-certified -- --tier unit"],
    )
    _add_common(parser, GITHUB_CANARY, handler, _github)
    parser.add_argument(
        "--canary-key", metavar="PATH",
        help=f"sign the canary with this separate canary key where the job runs (e.g. "
        f"{CANARY_KEY_NAME.format(vendor='<vendor>')}), never the vendor's signing key; "
        "default: unsigned")
    parser.add_argument("--runner-label", action="append", metavar="L",
                        help="a label the self-hosted runner must carry (repeatable; default "
                        "the vendor id)")
    parser.add_argument("--install", action="append", metavar="CMD",
                        help="a shell line installing the kit and the vendor's stack before "
                        "the canary's torch (repeatable; default `make install` then `ckit "
                        "vendors install <vendor>`)")
    parser.add_argument("--upstream", default="pytorch/pytorch", metavar="OWNER/NAME",
                        help="the only repository whose pull requests get the comment "
                        "(default pytorch/pytorch)")
    parser.add_argument("--token-secret", default="CKIT_UPSTREAM_TOKEN", metavar="NAME",
                        help="the secret holding a token that may comment there (default "
                        "CKIT_UPSTREAM_TOKEN)")
    parser.add_argument("--wheel-host", default=WHEEL_HOST, metavar="HOST",
                        help=f"the only host a dispatched wheel URL may name (default "
                        f"{WHEEL_HOST})")


def _add_kubernetes(engines: argparse._SubParsersAction, handler: Handler) -> None:  # type: ignore[type-arg]
    parser = add_command(
        engines, KUBERNETES_CRONJOB, "a CronJob: the canary on the nightly torch, every night",
        [f"ckit template {KUBERNETES_CRONJOB} --vendor acme --image registry/acme-ckit:1 "
         "--resource acme.com/npu=1 --baseline /ckit/acme-certified"],
    )
    _add_common(parser, KUBERNETES_CRONJOB, handler, _kubernetes)
    parser.add_argument("--image", metavar="IMG", help="the vendor's image (required)")
    parser.add_argument("--resource", default="nvidia.com/gpu=1", metavar="NAME=COUNT",
                        help="the device plugin's resource the pod asks for (default "
                        "nvidia.com/gpu=1)")
    parser.add_argument("--pvc", default="ckit-results", metavar="NAME",
                        help="the claim mounted at --root (default ckit-results)")
    parser.add_argument("--root", default="/ckit", metavar="DIR",
                        help="the claim's mount path; runs go to DIR/canary-<time> (default "
                        "/ckit)")
    parser.add_argument(
        "--canary-key-secret", metavar="NAME",
        help=f"sign the canary with the separate canary key a Secret holds as "
        f"{CANARY_KEY_NAME.format(vendor='<vendor>')} (never the vendor's signing key); "
        "default: unsigned")
    parser.add_argument("--key-secret", metavar="NAME", help=argparse.SUPPRESS)


def _add_slurm(engines: argparse._SubParsersAction, handler: Handler) -> None:  # type: ignore[type-arg]
    parser = add_command(
        engines, SLURM_SCRONTAB,
        "a scrontab entry: the canary on the nightly torch, every night, as a Slurm job",
        [f"ckit template {SLURM_SCRONTAB} --vendor acme --root /shared/ckit --baseline "
         "/shared/ckit/acme-certified --partition gpu --gres gpu:1 --time 4:00:00"],
    )
    _add_common(parser, SLURM_SCRONTAB, handler, _slurm)
    parser.add_argument(
        "--canary-key", metavar="PATH",
        help=f"sign the canary with this separate canary key where the job runs (e.g. "
        f"{CANARY_KEY_NAME.format(vendor='<vendor>')}), never the vendor's signing key; "
        "default: unsigned")
    parser.add_argument("--root", required=True, metavar="DIR",
                        help="storage every node sees: runs go to DIR/canary-<job id>")
    parser.add_argument("--partition", help="the partition (#SCRON --partition)")
    parser.add_argument("--gres", help="the accelerator the job needs, e.g. gpu:1")
    parser.add_argument("--time", help="the job's time limit, e.g. 4:00:00")
    parser.add_argument("--container-cmd", metavar="CMD",
                        help="a prefix running the command in the vendor image (apptainer "
                        "exec IMAGE)")
    parser.add_argument("--sbatch-line", action="append", default=[], metavar="OPT",
                        help="a further sbatch option (repeatable), e.g. --account=lab")


def add_canary_kinds(engines: argparse._SubParsersAction, handler: Handler) -> None:  # type: ignore[type-arg]
    _add_github(engines, handler)
    _add_kubernetes(engines, handler)
    _add_slurm(engines, handler)
