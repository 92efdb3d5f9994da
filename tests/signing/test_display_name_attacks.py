"""The vendor's display name comes only from the root-signed keyring (issue 36, item 6).

A profile's ``display_name`` is the vendor's own word: the kit writes the vendor id as the
report's display name (so the run's own summary.md shows no made-up name), and verify with
trusted roots refuses a report naming its vendor otherwise than by id or by the keyring's name.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from signing_helpers import REPORT, VENDOR, SignedRun, make_signed_run, write_report_files

from kit import paths
from kit.errors import VerificationError
from kit.signing.keyring import (
    KeyringManifest,
    KeyStatus,
    ManifestEntry,
    VendorIdentity,
    sign_manifest,
    write_manifest,
)
from kit.signing.keys import generate_private_key, keyid_of, public_key_pem
from kit.signing.sign import sign_output_dir
from kit.signing.trust import load_trusted_keyring
from kit.verification.verify import verify_envelope

MADE_UP = "Made-Up Accelerators Inc (certified by everyone)"
IDENTITY = VendorIdentity(VENDOR, "Acme NPU", "npu@acme.example", "https://acme.example/ckit")


def trusted_verify(run: SignedRun, roots: Path, identity: VendorIdentity | None) -> None:
    """Publishes a keyring.json listing the run's key (and ``identity``), signs it with a fresh
    root pinned in ``roots``, and verifies the run against it."""
    root = generate_private_key()
    roots.mkdir(parents=True, exist_ok=True)
    (roots / f"{keyid_of(root.public_key())}.pub.pem").write_bytes(
        public_key_pem(root.public_key()))
    signed_at = dt.datetime.fromisoformat(REPORT["run"]["finished_at"])
    entry = ManifestEntry(vendor=VENDOR, keyid=run.keyid(), status=KeyStatus.ACTIVE,
                          not_before=signed_at - dt.timedelta(days=30),
                          not_after=signed_at + dt.timedelta(days=365))
    identities = (identity,) if identity else ()
    write_manifest(run.keyring_dir, KeyringManifest(entries=(entry,), identities=identities))
    sign_manifest(run.keyring_dir, root)
    verify_envelope(run.envelope_path, trusted=load_trusted_keyring(run.keyring_dir, roots))


def resigned_with_display_name(tmp_path: Path, name: str) -> SignedRun:
    run = make_signed_run(tmp_path / "signed")
    vendor = {**REPORT["vendor"], "display_name": name}
    write_report_files(run.run_dir, {**REPORT, "vendor": vendor})
    sign_output_dir(run.run_dir, run.key_paths[VENDOR], None)
    return run


def test_the_kit_writes_the_vendor_id_as_the_display_name() -> None:
    assert REPORT["vendor"]["display_name"] == VENDOR


def test_a_made_up_display_name_is_refused_by_trusted_verify(tmp_path: Path) -> None:
    run = resigned_with_display_name(tmp_path, MADE_UP)
    with pytest.raises(VerificationError, match=r"^step 6: the report's display name") as caught:
        trusted_verify(run, tmp_path / "roots", IDENTITY)
    assert "names it 'Acme NPU'" in str(caught.value) and "\n" not in str(caught.value)


def test_a_made_up_display_name_is_refused_where_the_keyring_names_none(tmp_path: Path) -> None:
    run = resigned_with_display_name(tmp_path, MADE_UP)
    with pytest.raises(VerificationError, match=r"it names none\); a report names its vendor"):
        trusted_verify(run, tmp_path / "roots", None)


@pytest.mark.parametrize("name", [VENDOR, IDENTITY.name])
def test_the_vendor_id_or_the_keyrings_name_verifies(tmp_path: Path, name: str) -> None:
    run = resigned_with_display_name(tmp_path, name)
    trusted_verify(run, tmp_path / "roots", IDENTITY)


@pytest.mark.slow(seconds=60)
def test_a_made_up_display_name_in_the_profile_never_reaches_the_runs_summary(
    tmp_path: Path,
) -> None:
    vendors = tmp_path / "vendors"
    shutil.copytree(paths.vendors_dir() / "cpu", vendors / "cpu")
    profile = vendors / "cpu" / "vendor.yaml"
    lines = profile.read_text(encoding="utf-8").splitlines()
    lines = [f'display_name: "{MADE_UP}"' if line.startswith("display_name:") else line
             for line in lines]
    profile.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    env = {**os.environ, "CKIT_VENDORS_DIR": str(vendors), "XDG_CONFIG_HOME": str(tmp_path / "c")}
    done = subprocess.run(
        [sys.executable, "-m", "kit", "run", "--vendor", "cpu", "--tier", "unit", "--select",
         "unit/opinfo/add/float32/0", "--no-sign", "--out", str(out)],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    assert (out / "summary.md").exists(), done.stderr[-2000:]
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert MADE_UP not in summary and MADE_UP not in (out / "report.json").read_text()
    # The title names the vendor by its id (a narrowed run: partial, kit.grading.wording).
    assert summary.splitlines()[0].endswith(" `cpu`: partial (its tests meet conformant)"), \
        summary[:200]
