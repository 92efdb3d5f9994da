"""``ckit template KIND``: a sharded run, or the canary CI modes, for another scheduler.

The kit writes no scheduler of its own: the template starts ``ckit run --shard K/N`` for each
shard and then one ``ckit merge`` (``kit.engines.interface.ShardedRun``), and the vendor applies
it with their own runners or cluster. The canary kinds (``kit.cli.template_canary``) start a
canary run instead, dispatched by an upstream pull request or every night. Printed to stdout, or
written to a new ``--out`` file.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from kit.cli import add_command
from kit.cli.template_canary import add_canary_kinds
from kit.engines.github_actions import GithubActionsOptions, default_install, render_github_actions
from kit.engines.interface import ShardedRun
from kit.engines.kube_names import DeviceResource
from kit.engines.kubernetes import KubernetesOptions, render_kubernetes
from kit.errors import ExitCode, InputError
from kit.printable import printable

GITHUB_ACTIONS = "github-actions"
KUBERNETES = "kubernetes"
#: Where each engine's shards write unless --root says: the runner's workspace (artifacts carry
#: the shards to the merge), or the shared volume's mount path in every pod.
DEFAULT_ROOT = {GITHUB_ACTIONS: "ckit-run", KUBERNETES: "/ckit"}
#: ``make install`` puts ckit in the checkout's venv; a vendor image has it on PATH.
DEFAULT_CKIT = {GITHUB_ACTIONS: ".venv/bin/ckit", KUBERNETES: "ckit"}
DEFAULT_RESOURCE = "nvidia.com/gpu=1"


def _sharded_run(args: argparse.Namespace) -> ShardedRun:
    return ShardedRun(
        vendor=args.vendor,
        shards=args.shards,
        root=args.root or DEFAULT_ROOT[args.engine],
        run_args=tuple(args.run_args),
        sign=not args.no_sign,
        ckit=args.ckit or DEFAULT_CKIT[args.engine],
        keyring=args.keyring,
    )


def _job_name(args: argparse.Namespace) -> str:
    return str(args.name or f"ckit-{args.vendor}")


def _github_actions(args: argparse.Namespace) -> str:
    run = _sharded_run(args)
    options = GithubActionsOptions(
        runner_labels=tuple(args.runner_label or [run.vendor]),
        install=tuple(args.install or default_install(run)),
        workflow_name=_job_name(args),
    )
    return render_github_actions(run, options)


def _kubernetes(args: argparse.Namespace) -> str:
    if not args.image:
        raise InputError(
            "kubernetes: --image is required (the vendor's image with the kit and its stack "
            "installed)"
        )
    options = KubernetesOptions(
        job_name=_job_name(args),
        image=args.image,
        device=DeviceResource.parse(args.resource),
        pvc=args.pvc,
        key_secret=args.key_secret,
    )
    return render_kubernetes(_sharded_run(args), options)


def _write_new(path: Path, text: str) -> None:
    try:
        with path.open("x", encoding="utf-8") as out:
            out.write(text)
    except FileExistsError:
        raise InputError(f"--out: {path} exists; a template never overwrites a file") from None
    except OSError as error:
        raise InputError(f"--out: cannot write {path}: {error.strerror}") from None


def _template(args: argparse.Namespace) -> int:
    text = args.render(args)
    if args.out is None:
        print(text, end="")
    else:
        _write_new(args.out, text)
        print(printable(f"wrote {args.out}"))
    return ExitCode.OK


def _add_common(parser: argparse.ArgumentParser, engine: str,
                render: Callable[[argparse.Namespace], str]) -> None:
    parser.add_argument("--vendor", required=True, help="vendor id (vendors/<id>) on the nodes")
    parser.add_argument("--shards", type=int, required=True, metavar="N", help="shard count")
    parser.add_argument(
        "--root", metavar="DIR",
        help=f"where shards and the merge write (default {DEFAULT_ROOT[engine]})",
    )
    parser.add_argument(
        "--name", metavar="NAME", help="workflow or job name (default ckit-<vendor>)"
    )
    parser.add_argument(
        "--ckit", metavar="PATH", help=f"the ckit executable (default {DEFAULT_CKIT[engine]})"
    )
    parser.add_argument(
        "--no-sign", action="store_true",
        help="the merge writes an unsigned report (sign it later with `ckit sign`); shards "
        "always sign with the vendor's key",
    )
    parser.add_argument(
        "--keyring", metavar="DIR",
        help="keyring the merge checks each shard's signature with (default: the kit's)",
    )
    parser.add_argument(
        "--out", type=Path, metavar="FILE", help="write the YAML to FILE (never overwritten)"
    )
    parser.add_argument(
        "run_args", nargs="*", metavar="-- RUN_OPTION",
        help="after --: further ckit run options for every shard (--tier, --select, ...)",
    )
    parser.set_defaults(handler=_template, engine=engine, render=render)


def _add_github_actions(engines: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        engines, GITHUB_ACTIONS,
        "a workflow: a matrix job per shard on self-hosted runners, then the merge",
        ["ckit template github-actions --vendor acme --shards 8 --runner-label acme-npu "
         "-- --tier unit,models"],
    )
    _add_common(parser, GITHUB_ACTIONS, _github_actions)
    parser.add_argument(
        "--runner-label", action="append", metavar="L",
        help="a label the self-hosted runner must carry (repeatable; default the vendor id)",
    )
    parser.add_argument(
        "--install", action="append", metavar="CMD",
        help="a shell line installing the kit and the vendor's stack (repeatable; default "
        "`make install` then `ckit vendors install <vendor>`)",
    )


def _add_kubernetes(engines: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        engines, KUBERNETES, "an Indexed Job with a pod per shard, then a merge Job",
        ["ckit template kubernetes --vendor acme --shards 8 --image registry/acme-ckit:1 "
         "--resource acme.com/npu=1 --pvc ckit-results --key-secret acme-key"],
    )
    _add_common(parser, KUBERNETES, _kubernetes)
    parser.add_argument("--image", metavar="IMG", help="the vendor's image (required)")
    parser.add_argument(
        "--resource", default=DEFAULT_RESOURCE, metavar="NAME=COUNT",
        help=f"the device plugin's resource each shard pod asks for (default {DEFAULT_RESOURCE})",
    )
    parser.add_argument(
        "--pvc", default="ckit-results", metavar="NAME",
        help="the shared PersistentVolumeClaim mounted at the root (default ckit-results)",
    )
    parser.add_argument(
        "--key-secret", metavar="NAME",
        help="a Secret holding <vendor>.pem, the key the merge signs with (needed unless "
        "--no-sign)",
    )


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers,
        "template",
        "print a GitHub Actions workflow or Kubernetes Jobs that run the kit in N shards on the "
        "vendor's machines and merge them (ckit run --shard K/N, then ckit merge), or the "
        "canary CI modes: a run dispatched by an upstream pull request, a nightly one",
        [
            "ckit template github-actions --vendor acme --shards 4 --runner-label acme-npu",
            "ckit template kubernetes --vendor acme --shards 4 --image registry/acme-ckit:1 "
            "--resource acme.com/npu=1 --no-sign --out ckit-jobs.yaml -- --tier unit",
        ],
    )
    engines = parser.add_subparsers(dest="engine", metavar="ENGINE", required=True)
    _add_github_actions(engines)
    _add_kubernetes(engines)
    add_canary_kinds(engines, _template)
