"""Builders for the tests of the ``body`` report format: a report of standard v3 built from
records (no v3 run: v3 certifies torch 2.14.1 and these tests run on 2.13.0), its body written
and signed by a test key, a keyring holding that key.

A plain module (not conftest) so test files import it by a name no other area uses.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit.clock import RunDate
from kit.device import DeviceInfo
from kit.grading import build_report, collect_environment
from kit.patterns import matches
from kit.report.body import write_body_files
from kit.results import Status, TestRecord
from kit.rundir import ENVELOPE_NAME
from kit.signing.keyring import add_public_key
from kit.signing.keys import generate_private_key, private_key_pem, write_private_key
from kit.signing.sign import sign_output_dir
from kit.standard import load_standard
from kit.vendors import SkipManifest, load_vendor
from kit.verification.verify_body import VerifiedBody, verify_body_envelope

VENDOR = "acme"
#: The standard that declares the body format.
STANDARD = "v3"
SELECT = "unit/opinfo/add/float32/*"
FAILING = "unit/opinfo/add/float32/0"


def records_of(test_ids: list[str]) -> list[TestRecord]:
    failure = TestRecord(FAILING, Status.FAIL_NUMERIC, 0.5, "1/4 elements differ",
                         {"max_abs_err": 0.00125})
    return [failure if t == FAILING else TestRecord(t, Status.PASS, 0.25) for t in test_ids]


def body_report(finished: dt.datetime | None = None, select: str = SELECT,
                records: list[TestRecord] | None = None) -> dict[str, Any]:
    """A v3 report the kit builds itself from records: a run narrowed to ``select``."""
    finished = finished or dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(minutes=5)
    standard = load_standard(STANDARD)
    vendor = dataclasses.replace(load_vendor("cpu"), id=VENDOR, display_name=VENDOR)
    test_ids = [t for t in standard.test_ids("unit") if matches(t, select)]
    run = {"tiers": ["unit"], "select": [select], "timeout_s": 60.0,
           "started_at": (finished - dt.timedelta(minutes=5)).isoformat(),
           "finished_at": finished.isoformat(), "workers": 1, "complete": False}
    return build_report(records=records if records is not None else records_of(test_ids),
                        standard=standard, vendor=vendor, skips=SkipManifest(entries=()),
                        environment=collect_environment(DeviceInfo("cpu", 1, "x86_64")),
                        run=run, clock=RunDate(finished.date()))


@dataclass(frozen=True)
class SignedBody:
    run_dir: Path
    keyring: Path
    key_path: Path

    @property
    def envelope(self) -> Path:
        return self.run_dir / ENVELOPE_NAME

    def verify(self, **options: Any) -> VerifiedBody:
        return verify_body_envelope(self.envelope, keyring_dir=self.keyring, **options)

    def sign(self) -> Path:
        return sign_output_dir(self.run_dir, self.key_path, None)


def vendor_key(root: Path) -> tuple[Path, Path]:
    """A private key of ``VENDOR`` and a keyring holding its public key."""
    key = generate_private_key()
    key_path = root / "keys" / f"{VENDOR}.pem"
    write_private_key(key_path, private_key_pem(key, None), force=False)
    keyring = root / "keyring"
    add_public_key(keyring, VENDOR, key.public_key())
    return key_path, keyring


def signed_body(root: Path, report: dict[str, Any] | None = None) -> SignedBody:
    """``report`` (default: ``body_report()``) written as a body under ``root/run``, signed."""
    key_path, keyring = vendor_key(root)
    run_dir = root / "run"
    write_body_files(report if report is not None else body_report(), run_dir)
    signed = SignedBody(run_dir, keyring, key_path)
    signed.sign()
    return signed
