"""Builders for the signing tests: a run directory, real keys and a keyring under one root.

A plain module (not conftest) so test files can import it by a name no other area uses.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from kit.clock import RunDate
from kit.device import DeviceInfo
from kit.errors import KitError
from kit.formats.files import render_derived
from kit.grading import build_report, collect_environment
from kit.patterns import matches
from kit.results import Status, TestRecord
from kit.rundir import ENVELOPE_NAME
from kit.signing.dsse import Envelope, decode_envelope
from kit.signing.keyring import add_public_key
from kit.signing.keys import (
    generate_private_key,
    keyid_of,
    load_private_key,
    private_key_pem,
    write_private_key,
)
from kit.signing.sign import sign_output_dir, sign_payload
from kit.signing.statement import PAYLOAD_TYPE
from kit.standard import load_standard
from kit.strict_json import loads_strict
from kit.vendors import SkipManifest, load_vendor
from kit.verification.verify import VerifiedReport, verify_envelope

VENDOR = "acme"
#: The run the report describes: one op of the unit tier, so the report stays small.
SELECT = "unit/opinfo/add/float32/*"
FAILING = "unit/opinfo/add/float32/0"


def _records(test_ids: list[str]) -> list[TestRecord]:
    failure = TestRecord(
        FAILING, Status.FAIL_NUMERIC, 0.5, "1/4 elements differ", {"max_abs_err": 0.00125}
    )
    return [failure if t == FAILING else TestRecord(t, Status.PASS, 0.25) for t in test_ids]


def honest_report(finished: dt.datetime | None = None) -> dict[str, Any]:
    """A report the kit builds itself (real standard v1, the cpu profile filed as vendor acme,
    real environment): a run narrowed to ``SELECT`` with one failing required test, so it is
    graded non-conformant. It ended ``finished`` (default: five minutes ago)."""
    finished = finished or dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(minutes=5)
    standard = load_standard()
    vendor = dataclasses.replace(load_vendor("cpu"), id=VENDOR, display_name="Acme Accelerators")
    test_ids = [t for t in standard.test_ids("unit") if matches(t, SELECT)]
    run = {
        "tiers": ["unit"],
        "select": [SELECT],
        "timeout_s": 60.0,
        "started_at": (finished - dt.timedelta(minutes=5)).isoformat(),
        "finished_at": finished.isoformat(),
        "workers": 1,
        "complete": False,
    }
    return build_report(
        records=_records(test_ids),
        standard=standard,
        vendor=vendor,
        skips=SkipManifest(entries=()),
        environment=collect_environment(DeviceInfo("cpu", 1, "x86_64")),
        run=run,
        clock=RunDate(finished.date()),
    )


REPORT: dict[str, Any] = honest_report()


def write_report_files(run_dir: Path, report: dict[str, Any]) -> None:
    """report.json of the values given (tests write doctored ones too) and the files derived
    from it, as the kit renders them (verify's step 13 regenerates them byte for byte). A
    report too broken to render (verify refuses it at an earlier step) keeps the derived files
    already there."""
    run_dir.mkdir(parents=True, exist_ok=True)
    # As the kit writes it (canonical JSON and a newline), NaN allowed for doctored ones: step 8
    # takes no other text.
    text = json.dumps(report, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    report_json = (text + "\n").encode("utf-8")
    (run_dir / "report.json").write_bytes(report_json)
    try:
        derived = render_derived(report_json)
    except (KeyError, TypeError, ValueError, AttributeError, KitError):
        return
    for name, data in derived.items():
        (run_dir / name).write_bytes(data)


@dataclass
class SignedRun:
    """A signed run directory plus the keyring and private keys that signed it."""

    root: Path
    run_dir: Path
    keyring_dir: Path
    key_paths: dict[str, Path] = field(default_factory=dict)

    @property
    def envelope_path(self) -> Path:
        return self.run_dir / ENVELOPE_NAME

    def verify(self) -> VerifiedReport:
        return verify_envelope(self.envelope_path, keyring_dir=self.keyring_dir)

    def new_key(self, name: str, vendor: str | None) -> tuple[Ed25519PrivateKey, Path]:
        """A key saved as ``keys/<name>.pem``; filed in the keyring under ``vendor`` if given."""
        key = generate_private_key()
        path = self.root / "keys" / f"{name}.pem"
        write_private_key(path, private_key_pem(key, None), force=False)
        if vendor is not None:
            add_public_key(self.keyring_dir, vendor, key.public_key())
        self.key_paths[name] = path
        return key, path

    def private_key(self, name: str = VENDOR) -> Ed25519PrivateKey:
        return load_private_key(self.key_paths[name], None)

    def envelope(self) -> Envelope:
        return decode_envelope(loads_strict(self.envelope_path.read_bytes()))

    def statement(self) -> dict[str, Any]:
        document = loads_strict(self.envelope().payload)
        assert isinstance(document, dict)
        return document

    def write_envelope(self, envelope: Envelope) -> None:
        self.envelope_path.write_bytes(envelope.to_bytes())

    def sign_raw(
        self,
        payload: bytes,
        *,
        key: str = VENDOR,
        payload_type: str = PAYLOAD_TYPE,
    ) -> None:
        """Write an envelope whose signature over ``payload`` is perfectly valid."""
        signature = sign_payload(self.private_key(key), payload_type, payload)
        self.write_envelope(Envelope(payload_type, payload, (signature,)))

    def keyid(self, name: str = VENDOR) -> str:
        return keyid_of(self.private_key(name).public_key())


def make_signed_run(root: Path) -> SignedRun:
    run = SignedRun(root=root, run_dir=root / "run", keyring_dir=root / "keyring")
    write_report_files(run.run_dir, REPORT)
    _, key_path = run.new_key(VENDOR, VENDOR)
    sign_output_dir(run.run_dir, key_path, None)
    return run
