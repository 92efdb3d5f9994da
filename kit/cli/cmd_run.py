"""``ckit run``: certify a vendor's stack (tiers in isolated workers, report, signature)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kit.cli import add_command
from kit.clock import OVERRIDE_ENV, run_date
from kit.errors import ExitCode, InputError
from kit.grading.environment import CONTAINER_ENV
from kit.printable import printable
from kit.rundir import GOLDEN_DIR, REPORT_JSON, RUN_FILE, RunDir
from kit.runner.config import RunConfig
from kit.runner.devices import ALL as ALL_DEVICES
from kit.runner.devices import parse_devices
from kit.runner.plan import Shard
from kit.tiers.registry import complete_run_tiers, tier_names

if TYPE_CHECKING:
    from kit.grading.partial import Partial

#: The tiers a complete run covers (``kit.grading.policy``): every one but deploy, less those
#: the run's standard does not carry (``default_tiers``).
DEFAULT_TIERS = ",".join(complete_run_tiers())
#: The kit's own exit codes besides the grades' (kit.errors.ExitCode).
_OTHER_CODES = (
    f"  {int(ExitCode.PARTIAL):<4}partial: a narrowed run (--tier, --select, --rerun-failed) whose "
    "tests meet a\n      better grade than its own (only a complete run is graded conformant)\n"
    "  2-6 the run could not start or finish (usage, input, verification, device, environment)\n"
    "  70  the kit crashed (no verdict)\n"
    "  130 interrupted (finished tests are journaled: --resume)"
)


def grade_exit_codes() -> str:
    """The ``--help`` section listing each grade's exit code, as the standard defines them."""
    from kit.standard import load_standard

    try:
        standard = load_standard()
    except InputError as exc:  # help still prints; the run itself would stop on this
        return f"exit codes: see the standard's grades (unreadable here: {exc})"
    grades = "\n".join(f"  {g.exit_code:<4}{g.name}" for g in standard.grades)
    return (f"exit codes (each grade's own, from standard {standard.version}'s standard.yaml):"
            f"\n{grades}\n{_OTHER_CODES}")


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
            "ckit run --vendor cpu --tier unit --select 'unit/opinfo/add/*/*' --list",
            "ckit run --rerun-failed results/cpu --out results/cpu-rerun",
            "ckit run --vendor cpu --shard 0/4 --out results/cpu/shard-0-of-4 --no-sign",
        ],
    )
    parser.epilog = f"{parser.epilog}\n\n{grade_exit_codes()}"
    parser.add_argument("--vendor", help="vendor id (vendors/<id>) or path to a vendor.yaml")
    parser.add_argument(
        "--tier", default=None,
        help=f"comma-separated tiers among {','.join(tier_names())} (default: those of "
        f"{DEFAULT_TIERS} the run's standard carries; with --rerun-failed: the tiers of the "
        "failures)",
    )
    parser.add_argument(
        "--flows", metavar="LIST",
        help="comma-separated flows this run claims instead of the profile's `flows` (the "
        "report records them); the others end NOT_APPLICABLE",
    )
    parser.add_argument(
        "--select", action="append", default=[], metavar="PATTERN",
        help="only tests whose stable id matches this glob (repeatable)",
    )
    parser.add_argument(
        "--timeout", type=float, metavar="S",
        help="per-test time limit in seconds (default: the standard's limit per tier)",
    )
    parser.add_argument("--workers", type=int, default=None,
                        help="parallel workers (default 1; with --devices, one per device; on "
                             "scarce cores a second starts only when the tests left repay its "
                             "start-up)")
    parser.add_argument(
        "--devices", metavar="LIST",
        help="device indices for the worker slots, e.g. 0,1,2,3, or `all`: each slot's worker "
        "uses its own device (through the profile's device_env, else set_device); the report "
        "names every device",
    )
    parser.add_argument("--out", type=Path, help="output directory (default results/<vendor>)")
    parser.add_argument("--resume", type=Path, metavar="DIR", help="resume the run in DIR")
    parser.add_argument("--no-sign", action="store_true", help="write an unsigned report")
    parser.add_argument("--key", help="private key (default: ckit keys generate's location)")
    parser.add_argument(
        "--in-container", action="store_true",
        help="run inside the vendor's reference image (ckit image build); the host signs",
    )
    parser.add_argument("--image", help="with --in-container: image tag (default: debian12)")
    parser.add_argument(
        "--list", action="store_true",
        help="list the tests the run would execute, each with the kit's decision (run, skipped "
        "by a manifest entry, not applicable), and run nothing",
    )
    parser.add_argument(
        "--rerun-failed", type=Path, metavar="DIR",
        help="run only the tests the run in DIR did not pass (narrowed further by --tier and "
        f"--select) into a new --out (default DIR-rerun); {RUN_FILE} links back to DIR",
    )
    parser.add_argument(
        "--golden", action="store_true",
        help="keep each passing flow test's program, inputs and reference outputs under "
        f"OUT/{GOLDEN_DIR}/ and sign their manifest (check them with `ckit golden check OUT`)",
    )
    parser.add_argument(
        "--shard", metavar="K/N",
        help="run only shard K (0..N-1) of N: a deterministic part of the tests, the same on "
        "every machine; exits 0 once its report is written (a shard's grade is never a "
        "verdict: `ckit merge` the N shards for one)",
    )
    parser.add_argument(
        "--durations", type=Path, metavar="DIR",
        help="with --shard: balance the shards on the test durations a previous run recorded "
        f"(its directory or {REPORT_JSON}) instead of by test-id hash",
    )
    parser.add_argument(
        "--canary", action="store_true",
        help="run on a torch no carried standard certifies (a nightly, a release candidate): "
             "the newest standard's tests, graded not-certifiable, never a certificate",
    )
    parser.add_argument("--json", action="store_true", help="print the list or the outcome as JSON")
    parser.set_defaults(handler=handle)


def _tiers(value: str) -> tuple[str, ...]:
    tiers = tuple(t.strip() for t in value.split(",") if t.strip())
    unknown = [t for t in tiers if t not in tier_names()]
    if unknown or not tiers:
        raise InputError(f"--tier: unknown tier {', '.join(unknown) or '(empty)'}; "
                         f"choose from {', '.join(tier_names())}")
    return tiers


def _passthrough(args: argparse.Namespace, config: RunConfig) -> list[str]:
    """The run options the in-container ``ckit run`` needs besides vendor, tiers and output."""
    extra = [arg for pattern in config.select for arg in ("--select", pattern)]
    if config.flows is not None:
        extra += ["--flows", ",".join(config.flows)]
    if args.timeout is not None:
        extra += ["--timeout", str(args.timeout)]
    if config.golden:
        extra.append("--golden")
    if config.shard is not None:
        extra += ["--shard", str(config.shard)]
    if config.durations is not None:
        raise InputError("--durations is not taken with --in-container (the container does "
                         "not see the previous run); balance by test-id hash there")
    if config.devices is not None:
        extra += ["--devices", ",".join(config.devices)]
    if config.canary:
        extra.append("--canary")
    return extra + ["--workers", str(config.workers)] if config.workers else extra


def config_from_args(args: argparse.Namespace) -> RunConfig:
    if args.rerun_failed is not None:
        return _rerun_config(args)
    tiers = _tiers(args.tier) if args.tier else default_tiers()
    return _config(args, args.vendor, tiers, tuple(args.select))


def default_tiers() -> tuple[str, ...]:
    """The tiers a run covers when ``--tier`` names none: the complete run's under the
    standard the run uses (a run under v1 has no compile or distributed tier)."""
    from kit.standard import load_standard

    return complete_run_tiers(load_standard())


def _rerun_config(args: argparse.Namespace) -> RunConfig:
    """The previous run's failures; its vendor unless --vendor names another profile."""
    from kit.runner.rerun import load_rerun

    tiers = _tiers(args.tier) if args.tier else None
    rerun = load_rerun(args.rerun_failed, tiers, tuple(args.select))
    config = _config(args, args.vendor or rerun.vendor, rerun.tiers, rerun.test_ids,
                     args.out or _default_out(args))
    return dataclasses.replace(config, rerun_of=rerun.previous)


def _config(
    args: argparse.Namespace,
    vendor: str | None,
    tiers: tuple[str, ...],
    select: tuple[str, ...],
    out: Path | None = None,
) -> RunConfig:
    from kit.runner.outdir import refuse_dangling_link

    if not vendor:
        raise InputError("--vendor is required (or --resume DIR); see `ckit vendors list`")
    if args.workers is not None and args.workers < 1:
        raise InputError("--workers must be at least 1")
    devices = parse_devices(args.devices) if args.devices is not None else None
    if args.timeout is not None and args.timeout <= 0:
        raise InputError("--timeout must be a positive number of seconds")
    # CKIT_TODAY exists for the kit's own tests: the report records it and is not certifiable.
    clock = run_date(os.environ.get(OVERRIDE_ENV))
    out = out or args.out or Path("results") / Path(vendor).name
    refuse_dangling_link(out)  # resolving it would aim the run at the link's missing target
    return RunConfig(
        vendor=vendor,
        tiers=tiers,
        select=select,
        timeout_s=args.timeout,
        workers=_workers(args.workers, devices),
        devices=devices,
        out_dir=out.resolve(),
        sign=not args.no_sign,
        key_path=args.key,
        clock=clock,
        golden=args.golden,
        flows=_flows(args.flows),
        shard=_shard(args),
        durations=str(args.durations.resolve()) if args.durations is not None else None,
        canary=args.canary,
    )


def _workers(given: int | None, devices: tuple[str, ...] | None) -> int:
    """1 by default; with --devices, one per device (0: as many as `all` finds)."""
    if given is not None:
        return given
    if devices is None:
        return 1
    return 0 if devices == (ALL_DEVICES,) else len(devices)


def _shard(args: argparse.Namespace) -> Shard | None:
    if args.shard is None:
        if args.durations is not None:
            raise InputError("--durations balances shards: give it with --shard K/N")
        return None
    if args.golden:
        raise InputError("--golden is not taken with --shard: `ckit merge` does not join "
                         "golden artifacts yet; keep them from an unsharded run")
    return Shard.parse(args.shard)


def _flows(value: str | None) -> tuple[str, ...] | None:
    """``--flows``: registered flow names, or None for the profile's."""
    if value is None:
        return None
    from kit.flows import flow_names

    flows = tuple(dict.fromkeys(f.strip() for f in value.split(",") if f.strip()))
    unknown = [f for f in flows if f not in flow_names()]
    if unknown or not flows:
        raise InputError(f"--flows: unknown flow {', '.join(unknown) or '(empty)'}; "
                         f"choose from {', '.join(flow_names())}")
    return flows


def _default_out(args: argparse.Namespace) -> Path:
    if args.rerun_failed is not None:
        return Path(f"{args.rerun_failed.resolve()}-rerun")
    return Path("results") / Path(args.vendor or "").name


def _refuse_conflicts(args: argparse.Namespace) -> None:
    if args.resume is not None and (args.list or args.rerun_failed is not None):
        raise InputError("--resume finishes the run in its directory as it was started; "
                         "it takes neither --list nor --rerun-failed")
    if args.shard is not None and args.rerun_failed is not None:
        raise InputError("--rerun-failed runs a previous run's failures: it takes no --shard")


def _list(config: RunConfig, as_json: bool) -> int:
    from kit.runner.listing import list_plan

    _refuse_unrunnable(config)
    planned = list_plan(config)
    counts: dict[str, int] = {}
    for test in planned:
        counts[test.decision] = counts.get(test.decision, 0) + 1
    summary = ", ".join(f"{n} {decision}" for decision, n in sorted(counts.items()))
    if as_json:
        document = {"vendor": config.vendor, "tiers": list(config.tiers),
                    "select": list(config.select), "counts": counts,
                    "tests": [test.to_json() for test in planned]}
        print(json.dumps(document, indent=2, ensure_ascii=True))
    else:
        print("\n".join(printable(test.text()) for test in planned))
    print(f"{len(planned)} test(s): {summary}", file=sys.stderr)
    return int(ExitCode.OK)


def handle(args: argparse.Namespace) -> int:
    from kit.runner.session import resume_run, start_run

    _refuse_conflicts(args)
    # A finished run is refused by the resume itself (kit.runner.outdir): never re-signed.
    try:
        if args.resume is not None:
            result = resume_run(args.resume.resolve())
        elif args.list:
            return _list(config_from_args(args), args.json)
        elif args.in_container:
            from kit.container.host_run import start_run_in_container  # imports docker

            config = config_from_args(args)
            result = start_run_in_container(config, args.image, _passthrough(args, config))
        else:
            from kit.standard.catalogue import require_certifying_standard

            require_certifying_standard(args.canary)  # before a worker starts
            config = config_from_args(args)
            _refuse_unrunnable(config)
            result = start_run(config)
    except KeyboardInterrupt:
        out = args.resume or args.out or _default_out(args)
        print(f"ckit: interrupted; finished tests are journaled: `ckit run --resume {out}`",
              file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    grade = result.report.get("grade", {}).get("name", "unknown")
    partial = partial_of_report(result.report)
    code = graded_exit_code(grade, partial)
    shard = result.report.get("run", {}).get("shard")
    if shard is not None and code != int(ExitCode.KIT_CRASHED):
        code = int(ExitCode.OK)  # a shard is graded as the narrowed run it is: the merge grades
    if os.environ.get(CONTAINER_ENV) and not args.json:
        # The run inside a host's --in-container run: the host names the files by its own
        # paths once it has signed them, and the grade, so the container's /out lines would
        # only say it twice, by paths the reader does not have.
        return code
    say_report_files(result.out_dir)
    if result.envelope is not None:
        print(f"envelope: {result.envelope}", file=sys.stderr)
    if shard is not None and code == int(ExitCode.OK):
        print(f"shard {shard['index']}/{shard['count']}: finished; `ckit merge` its shards "
              "for the run's grade", file=sys.stderr)
    if args.json:
        envelope = str(result.envelope) if result.envelope is not None else None
        print(json.dumps({"grade": grade, **qualified(partial), "exit_code": code,
                          "out_dir": str(result.out_dir), "envelope": envelope},
                         indent=2, ensure_ascii=True))
    else:
        print(f"grade: {printable(partial.words() if partial is not None else grade)}")
    return code


def _refuse_unrunnable(config: RunConfig) -> None:
    """A --tier the standard does not carry, or a --select that matches no test, stops here in
    one line, before a worker starts (a rerun selects the failures' own ids: never empty)."""
    from kit.cli.select_check import refuse_empty_selection, refuse_uncarried_tiers
    from kit.standard import load_standard

    standard = load_standard()
    refuse_uncarried_tiers(standard, config.tiers)
    if config.rerun_of is None:
        refuse_empty_selection(standard, config.tiers, config.select)


def say_report_files(out_dir: Path) -> None:
    """Each report file the run wrote, from its format's own list (``RunDir.report_names``):
    report.json and the files it renders, or a body, whose views ``ckit render`` writes."""
    run_dir = RunDir(out_dir)
    for path in run_dir.report_paths():
        print(f"report: {path}", file=sys.stderr)
    if run_dir.holds_body():
        print(f"views: `ckit render {out_dir}` renders them from the body", file=sys.stderr)


def graded_exit_code(grade: str, partial: Partial | None) -> int:
    """The grade's own code; partial's when the narrowing alone kept the run from a better
    grade (``ckit run`` and ``ckit merge`` alike)."""
    if partial is not None and partial.only_narrowed:
        return int(ExitCode.PARTIAL)
    return exit_code_of(grade)


def qualified(partial: Partial | None) -> dict[str, str | None]:
    """The ``--json`` fields of a narrowed run's qualifier (None for a complete run)."""
    return {"qualifier": "partial" if partial is not None else None,
            "earned": partial.earned if partial is not None else None}


def partial_of_report(report: dict[str, Any]) -> Partial | None:
    """A narrowed run's qualifier (None for a complete run, or a report it cannot grade), as
    every view words the run (``kit.grading.wording``)."""
    from kit.grading.wording import document_wording

    try:
        return document_wording(report).partial
    except KeyError:
        return None


def exit_code_of(grade: str) -> int:
    """The grade's own exit code (standard.yaml): a pipeline can tell every grade apart."""
    from kit.standard import load_standard

    try:
        return load_standard().grade(grade).exit_code
    except InputError:
        return int(ExitCode.KIT_CRASHED)  # a report without a known grade: no verdict
