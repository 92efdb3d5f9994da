"""What a run was asked to do, persisted as ``run.json`` so ``--resume`` needs no arguments."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kit.clock import RunDate
from kit.errors import InputError
from kit.outfiles import write_new_file
from kit.rundir import PreviousRun, RunDir
from kit.runner.plan import Shard


@dataclass(frozen=True)
class RunConfig:
    vendor: str
    tiers: tuple[str, ...]
    select: tuple[str, ...]
    #: None: the standard's per-tier limits.
    timeout_s: float | None
    workers: int
    out_dir: Path
    sign: bool
    key_path: str | None
    #: The date skip-manifest expiry is judged by; fixed at the start so a resume agrees.
    clock: RunDate
    #: Set on a ``--rerun-failed`` run: the previous run, kept in run.json.
    rerun_of: PreviousRun | None = None
    #: Whether the judges keep golden artifacts (``--golden``) and the run signs their manifest.
    golden: bool = False
    #: ``--flows``: the flows this run claims instead of the profile's ``flows`` (None: those).
    flows: tuple[str, ...] | None = None
    #: ``--shard K/N``: run only this shard of the plan (None: all of it).
    shard: Shard | None = None
    #: ``--durations``: the previous run (directory or report.json) whose times balance shards.
    durations: str | None = None
    #: ``--devices``: indices (one per worker slot, shared round-robin) or ``("all",)``.
    devices: tuple[str, ...] | None = None
    #: ``--canary``: a run on a torch no carried standard certifies (graded, never certified).
    canary: bool = False

    @property
    def today(self) -> str:
        return self.clock.today.isoformat()

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["clock"] = self.clock.to_json()
        data["out_dir"] = str(self.out_dir)
        data["tiers"] = list(self.tiers)
        data["select"] = list(self.select)
        data["flows"] = list(self.flows) if self.flows is not None else None
        data["shard"] = str(self.shard) if self.shard is not None else None
        data["devices"] = list(self.devices) if self.devices is not None else None
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], out_dir: Path) -> RunConfig:
        return cls(
            vendor=data["vendor"],
            tiers=tuple(data["tiers"]),
            select=tuple(data["select"]),
            timeout_s=data["timeout_s"],
            workers=int(data["workers"]),
            out_dir=out_dir,
            sign=bool(data["sign"]),
            key_path=data["key_path"],
            clock=RunDate.from_json(data["clock"]),
            rerun_of=PreviousRun.from_json(data["rerun_of"]) if data.get("rerun_of") else None,
            golden=bool(data.get("golden", False)),
            flows=tuple(data["flows"]) if data.get("flows") is not None else None,
            shard=Shard.parse(data["shard"]) if data.get("shard") else None,
            durations=data.get("durations"),
            devices=tuple(data["devices"]) if data.get("devices") is not None else None,
            canary=bool(data.get("canary", False)),
        )


def save_run_file(out_dir: Path, config: RunConfig, pins: dict[str, str], started_at: str) -> None:
    payload = {"config": config.to_json(), "pins": pins, "started_at": started_at}
    text = json.dumps(payload, indent=2, sort_keys=True) + "\n"
    write_new_file(RunDir(out_dir).run_file, text.encode("utf-8"))  # never through a planted link


#: The run file is a few hundred bytes (a rerun's --select adds one id per failure).
MAX_RUN_FILE_BYTES = 16 << 20


def previous_run_of(run_dir: Path) -> PreviousRun | None:
    """The run ``run_dir``'s run.json says it reran the failures of; None when it says none.

    Read from a directory someone may have handed over, so bounded and strict; a run.json that
    cannot be read that way is an error, not a silent "none".
    """
    from kit.bounded_read import FileMissing, read_regular_file
    from kit.strict_json import loads_strict

    source = RunDir(run_dir).run_file
    try:
        data = read_regular_file(source, limit=MAX_RUN_FILE_BYTES, what="run file")
    except FileMissing:
        return None
    payload = loads_strict(data, what=str(source), error=InputError)
    try:
        link = payload["config"].get("rerun_of")
        return PreviousRun.from_json(link) if link else None
    except (AttributeError, KeyError, TypeError) as exc:
        raise InputError(f"{source}: unreadable run file ({exc!r})") from None


def load_run_file(out_dir: Path) -> tuple[RunConfig, dict[str, str], str]:
    source = RunDir(out_dir).run_file
    try:
        payload = json.loads(source.read_text(encoding="utf-8"))
        return (
            RunConfig.from_json(payload["config"], out_dir),
            dict(payload["pins"]),
            str(payload["started_at"]),
        )
    except FileNotFoundError:
        raise InputError(f"{source}: not found; {out_dir} holds no run to resume") from None
    except (ValueError, KeyError, TypeError, InputError) as exc:
        raise InputError(f"{source}: unreadable run file ({exc!r})") from None
