"""A whole run: prepare (or resume), execute, report, sign."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path
from typing import Any

from kit.errors import DeviceError, InputError
from kit.results import TestRecord
from kit.rundir import RunDir
from kit.runner.config import RunConfig
from kit.runner.inputs import RunInputs, load_inputs
from kit.runner.lifecycle import (
    abandon_unstarted_run,
    prepare_new_run,
    prepare_resume,
    remove_evidence,
)
from kit.runner.orchestrator import Orchestrator
from kit.runner.pool import WorkerStartError
from kit.runner.reaper import run_reaper


@dataclasses.dataclass(frozen=True)
class RunResult:
    """A finished run: its directory, its report, its envelope."""

    out_dir: Path
    report: dict[str, Any]
    envelope: Path | None


def signing_key(config: RunConfig, vendor_id: str) -> Path:
    """The private key the run will sign with; checked before any test runs."""
    from kit.signing.sign import default_key_path

    key = Path(config.key_path) if config.key_path else default_key_path(vendor_id)
    if not key.exists():
        raise InputError(
            f"no signing key for vendor {vendor_id} at {key}: create one with "
            f"`ckit keys generate --vendor {vendor_id}` (or pass --key PATH, or --no-sign)"
        )
    return key


def start_run(config: RunConfig) -> RunResult:
    inputs = load_inputs(config)
    if config.sign:
        signing_key(config, inputs.vendor.id)  # before any test runs
    created = not config.out_dir.exists()
    started_at = prepare_new_run(config, inputs)
    try:
        return _execute(config, inputs, started_at)
    except WorkerStartError:
        raise  # its message names the worker's log, left in the run directory to be read
    except (DeviceError, InputError):
        abandon_unstarted_run(config.out_dir, created=created)
        raise


def resume_run(out_dir: Path) -> RunResult:
    config, inputs, started_at = prepare_resume(out_dir)
    if config.sign:
        signing_key(config, inputs.vendor.id)
    return _execute(config, inputs, started_at)


def _execute(config: RunConfig, inputs: RunInputs, started_at: str) -> RunResult:
    orchestrator = Orchestrator(config, inputs, started_at)
    # Every process the run started (a vendor's setsid grandchild too) ends before the
    # report: none is left to rewrite a finished run's directory (kit.runner.reaper).
    with run_reaper():
        records = orchestrator.execute()
    remove_evidence(RunDir(config.out_dir))  # every verdict is journaled: the judges are done
    return finish(config, inputs, list(records.values()), orchestrator, started_at)


def finish(
    config: RunConfig,
    inputs: RunInputs,
    records: list[TestRecord],
    orchestrator: Orchestrator,
    started_at: str,
) -> RunResult:
    from kit.formats import write_report_files
    from kit.grading import build_report, collect_environment
    from kit.grading.certified import vendor_packages

    run_info: dict[str, Any] = {
        "tiers": list(config.tiers),
        "select": list(config.select),
        "timeout_s": config.timeout_s,
        "workers": orchestrator.workers,
        "started_at": started_at,
        "finished_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    if (shard := inputs.plan.shard_json()) is not None:
        run_info["shard"] = shard
    if orchestrator.slots is not None:
        run_info["devices"] = orchestrator.slots.to_json(orchestrator.slot_names)
    if config.canary:
        run_info["canary"] = True  # signed: audit and gate never take it for a certificate
    if config.rerun_of is not None:
        run_info["rerun_of"] = dataclasses.asdict(config.rerun_of)  # run.json's link, signed
    environment = {
        **collect_environment(orchestrator.device_info()),
        "vendor_packages": vendor_packages(inputs.vendor),
    }
    report = build_report(
        records=records,
        standard=inputs.standard,
        vendor=inputs.vendor,
        skips=inputs.skips,
        environment=environment,
        run=run_info,
        clock=config.clock,
    )
    write_report_files(report, config.out_dir)
    if config.golden:
        _list_golden(config.out_dir)  # before signing: the manifest is a signed subject
    return RunResult(config.out_dir, report, _seal(config, inputs))


def _list_golden(out_dir: Path) -> None:
    import sys

    from kit.golden.manifest import write_manifest

    run_dir = RunDir(out_dir)
    manifest = write_manifest(out_dir, run_dir.workers)
    lost = f"; {manifest.unwritten} could not be written" if manifest.unwritten else ""
    where = run_dir.golden_manifest
    print(f"golden: {len(manifest.entries)} artifact(s) listed in {where}{lost}", file=sys.stderr)


def _seal(config: RunConfig, inputs: RunInputs) -> Path:
    from kit.signing.keys import passphrase_from_env
    from kit.signing.sign import sign_output_dir, write_unsigned_envelope

    if not config.sign:
        return write_unsigned_envelope(config.out_dir)
    key = signing_key(config, inputs.vendor.id)
    return sign_output_dir(config.out_dir, key, passphrase_from_env())
