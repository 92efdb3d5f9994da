"""Reports built by the kit's own builder, and signed runs with real keys and a keyring.

A plain module (not conftest) so test files can import it by a name no other area uses.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit.clock import RunDate
from kit.device import DeviceInfo
from kit.formats.files import write_report_files
from kit.grading import build_report, collect_environment
from kit.grading.released import load_released_kits
from kit.hashing import RELEASED_KITS
from kit.patterns import matches
from kit.report.model import Report
from kit.results import Status, TestRecord
from kit.signing.keyring import add_public_key
from kit.signing.keys import generate_private_key, private_key_pem, write_private_key
from kit.signing.sign import sign_output_dir
from kit.standard import load_standard
from kit.tiers.registry import tier_names
from kit.vendors import SkipEntry, SkipManifest, load_vendor
from kit.verification.content import KitStanding, kit_standing

VENDOR = "acme"
SELECT = "unit/opinfo/add/float32/*"
ALL_TIERS = tier_names()
#: This kit checkout, wherever ``CKIT_HOME`` points a test meanwhile.
CHECKOUT = Path(__file__).resolve().parents[2]
#: The checkout's cpu profile, filed as vendor acme.
CPU_PROFILE = CHECKOUT / "vendors" / "cpu"


def finished_ago(delta: dt.timedelta) -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0) - delta


def _build(
    records: list[TestRecord],
    run: dict[str, Any],
    finished: dt.datetime,
    skips: Sequence[SkipEntry],
    torch_version: str | None,
) -> dict[str, Any]:
    standard = load_standard()
    vendor = dataclasses.replace(
        load_vendor(CPU_PROFILE), id=VENDOR, display_name="Acme Accelerators"
    )
    environment = collect_environment(DeviceInfo("cpu", 1, "x86_64"))
    if torch_version is not None:
        environment["torch"]["version"] = torch_version
    times = {
        "started_at": (finished - dt.timedelta(minutes=5)).isoformat(),
        "finished_at": finished.isoformat(),
    }
    return build_report(
        records=records,
        standard=standard,
        vendor=vendor,
        skips=SkipManifest(entries=tuple(skips)),
        environment=environment,
        run={"timeout_s": 60.0, "workers": 1, **run, **times},
        clock=RunDate(finished.date()),
    )


def narrowed_report(
    finished: dt.datetime | None = None,
    skips: Sequence[SkipEntry] = (),
    torch_version: str | None = None,
) -> dict[str, Any]:
    """A run narrowed to ``SELECT``, all passed: graded non-conformant (it is incomplete)."""
    finished = finished or finished_ago(dt.timedelta(minutes=5))
    ids = [t for t in load_standard().test_ids("unit") if matches(t, SELECT)]
    records = [TestRecord(t, Status.PASS, 0.25) for t in ids]
    run = {"tiers": ["unit"], "select": [SELECT], "complete": False}
    return _build(records, run, finished, skips, torch_version)


def full_report(failing: Sequence[str] = (), finished: dt.datetime | None = None) -> dict[str, Any]:
    """A complete run of every locked test of standard v1; ``failing`` ids fail numerically."""
    finished = finished or finished_ago(dt.timedelta(minutes=5))
    standard = load_standard()
    ids = [t for tier in ALL_TIERS for t in standard.test_ids(tier)]
    records = [
        TestRecord(t, Status.FAIL_NUMERIC, 0.5, "differs") if t in failing
        else TestRecord(t, Status.PASS, 0.25)
        for t in ids
    ]
    run = {"tiers": list(ALL_TIERS), "select": [], "complete": True}
    return _build(records, run, finished, (), None)


def read(document: dict[str, Any]) -> tuple[Report, KitStanding]:
    """The typed report and its kit standing against the kit home's released list."""
    report = Report.from_json(copy.deepcopy(document))
    return report, kit_standing(report, load_released_kits())


@dataclass(frozen=True)
class SignedRun:
    run_dir: Path
    keyring_dir: Path

    @property
    def envelope(self) -> Path:
        return self.run_dir / "report.dsse.json"

    def verify_args(self, *options: str) -> list[str]:
        return ["verify", str(self.envelope), "--keyring", str(self.keyring_dir), *options]


def sign_report(root: Path, report: dict[str, Any]) -> SignedRun:
    """Write every report file the kit's way, and sign them with a new key of ``VENDOR``."""
    run = SignedRun(root / "run", root / "keyring")
    write_report_files(report, run.run_dir)
    key = generate_private_key()
    key_path = root / "keys" / f"{VENDOR}.pem"
    write_private_key(key_path, private_key_pem(key, None), force=False)
    add_public_key(run.keyring_dir, VENDOR, key.public_key())
    sign_output_dir(run.run_dir, key_path, None)
    return run


def release_entry(digest: str, version: str = "0.1.0", date: str = "2027-01-31") -> str:
    return f'released:\n  - version: "{version}"\n    digest: "{digest}"\n    date: {date}\n'


def kit_home_releasing(home: Path, digest: str | None) -> Path:
    """A kit home (for ``CKIT_HOME``): this checkout's standards, ``digest`` listed released."""
    shutil.copytree(CHECKOUT / "standards", home / "standards")
    if digest is not None:
        (home / "standards" / RELEASED_KITS).write_text(release_entry(digest), encoding="utf-8")
    return home


def report_json(run: SignedRun) -> dict[str, Any]:
    document = json.loads((run.run_dir / "report.json").read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document
