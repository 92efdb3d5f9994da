"""``ckit run``: certify a vendor's stack (tiers in isolated workers, report, signature)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from kit.cli import add_command
from kit.clock import OVERRIDE_ENV, run_date
from kit.errors import ExitCode, InputError
from kit.results import TIERS
from kit.runner.config import RunConfig

DEFAULT_TIERS = "unit,models"


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers,
        "run",
        "run the conformance tiers for a vendor and write a signed report",
        [
            "ckit run --vendor cpu --out results/cpu",
            "ckit run --vendor simnpu --tier unit --select 'unit/opinfo/add/*/*' --no-sign",
            "ckit run --resume results/cpu",
            "ckit run --vendor cpu --in-container --tier deploy,unit --out results/cpu-debian12",
        ],
    )
    parser.add_argument("--vendor", help="vendor id (vendors/<id>) or path to a vendor.yaml")
    parser.add_argument(
        "--tier", default=DEFAULT_TIERS,
        help=f"comma-separated tiers among {','.join(TIERS)} (default: {DEFAULT_TIERS})",
    )
    parser.add_argument(
        "--select", action="append", default=[], metavar="PATTERN",
        help="only tests whose stable id matches this glob (repeatable)",
    )
    parser.add_argument(
        "--timeout", type=float, metavar="S",
        help="per-test time limit in seconds (default: the standard's limit per tier)",
    )
    parser.add_argument("--workers", type=int, default=1, help="parallel workers (default 1)")
    parser.add_argument("--out", type=Path, help="output directory (default results/<vendor>)")
    parser.add_argument("--resume", type=Path, metavar="DIR", help="resume the run in DIR")
    parser.add_argument("--no-sign", action="store_true", help="write an unsigned report")
    parser.add_argument("--key", help="private key (default: ckit keys generate's location)")
    parser.add_argument(
        "--in-container", action="store_true",
        help="run inside the vendor's reference image (ckit image build); the host signs",
    )
    parser.add_argument("--image", help="with --in-container: image tag (default: debian12)")
    parser.set_defaults(handler=handle)


def _tiers(value: str) -> tuple[str, ...]:
    tiers = tuple(t.strip() for t in value.split(",") if t.strip())
    unknown = [t for t in tiers if t not in TIERS]
    if unknown or not tiers:
        raise InputError(f"--tier: unknown tier {', '.join(unknown) or '(empty)'}; "
                         f"choose from {', '.join(TIERS)}")
    return tiers


def _passthrough(args: argparse.Namespace) -> list[str]:
    """The run options the in-container ``ckit run`` needs besides vendor, tiers and output."""
    extra = [arg for pattern in args.select for arg in ("--select", pattern)]
    if args.timeout is not None:
        extra += ["--timeout", str(args.timeout)]
    return extra + ["--workers", str(args.workers)]


def config_from_args(args: argparse.Namespace) -> RunConfig:
    from kit.runner.outdir import refuse_dangling_link

    if not args.vendor:
        raise InputError("--vendor is required (or --resume DIR); see `ckit vendors list`")
    if args.workers < 1:
        raise InputError("--workers must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        raise InputError("--timeout must be a positive number of seconds")
    # CKIT_TODAY exists for the kit's own tests: the report records it and is not certifiable.
    clock = run_date(os.environ.get(OVERRIDE_ENV))
    out = args.out or Path("results") / Path(args.vendor).name
    refuse_dangling_link(out)  # resolving it would aim the run at the link's missing target
    return RunConfig(
        vendor=args.vendor,
        tiers=_tiers(args.tier),
        select=tuple(args.select),
        timeout_s=args.timeout,
        workers=args.workers,
        out_dir=out.resolve(),
        sign=not args.no_sign,
        key_path=args.key,
        clock=clock,
    )


def handle(args: argparse.Namespace) -> int:
    from kit.runner.session import resume_run, start_run, start_run_in_container

    # A finished run is refused by the resume itself (kit.runner.outdir): never re-signed.
    try:
        if args.resume is not None:
            result = resume_run(args.resume.resolve())
        elif args.in_container:
            config = config_from_args(args)
            result = start_run_in_container(config, args.image, _passthrough(args))
        else:
            result = start_run(config_from_args(args))
    except KeyboardInterrupt:
        out = args.resume or args.out or Path("results") / Path(args.vendor or "").name
        print(f"ckit: interrupted; finished tests are journaled: `ckit run --resume {out}`",
              file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    grade = result.report.get("grade", {}).get("name", "unknown")
    print(f"report: {result.out_dir / 'report.json'}", file=sys.stderr)
    print(f"summary: {result.out_dir / 'summary.md'}", file=sys.stderr)
    if result.envelope is not None:
        print(f"envelope: {result.envelope}", file=sys.stderr)
    print(f"grade: {grade}")
    return _exit_code_of(grade)


def _exit_code_of(grade: str) -> int:
    """The grade's own exit code (standard.yaml): a pipeline can tell every grade apart."""
    from kit.standard import load_standard

    try:
        return load_standard().grade(grade).exit_code
    except InputError:
        return int(ExitCode.KIT_CRASHED)  # a report without a known grade: no verdict
