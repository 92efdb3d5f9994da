"""Builders for vendor directories used by the tests in this folder (plain functions, no mocks)."""

from __future__ import annotations

from pathlib import Path

#: A complete, valid profile; tests derive their adversarial variants from it.
GOOD_PROFILE = """\
id: acme
display_name: Acme NPU
contact: Acme Conformance <conformance@acme.example>
docs_url: https://acme.example/docs
device_type: cpu
import_modules: []
requirements: []
dtypes: [float32, bfloat16]
flows: [eager]
skip_manifest: skips.yaml
"""

EMPTY_SKIPS = "skips: []\n"


def skip_entry(
    test: str,
    *,
    reason: str = "unsupported-op",
    expires: str = "2027-03-31",
    tracking: str = "https://acme.example/issues/7",
) -> str:
    """One YAML list item of a skip manifest."""
    return (
        f"  - test: {test!r}\n"
        f"    reason: {reason}\n"
        f"    tracking: {tracking}\n"
        f"    expires: {expires}\n"
    )


def skips_yaml(*entries: str) -> str:
    return "skips:\n" + "".join(entries) if entries else EMPTY_SKIPS


def write_vendor(
    root: Path,
    vendor_id: str = "acme",
    profile: str | None = None,
    skips: str | None = EMPTY_SKIPS,
) -> Path:
    """Write ``root/<vendor_id>/vendor.yaml`` (+ ``skips.yaml`` unless None); returns the dir."""
    directory = root / vendor_id
    directory.mkdir(parents=True, exist_ok=True)
    text = GOOD_PROFILE.replace("id: acme", f"id: {vendor_id}") if profile is None else profile
    (directory / "vendor.yaml").write_text(text, encoding="utf-8")
    if skips is not None:
        (directory / "skips.yaml").write_text(skips, encoding="utf-8")
    return directory


def write_locked_standard(home: Path, source_standard: Path, unit_ids: list[str]) -> Path:
    """A kit home (for ``CKIT_HOME``) holding standard v1 and a locked unit test list."""
    standard = home / "standards" / "v1"
    (standard / "tests").mkdir(parents=True)
    (standard / "standard.yaml").write_bytes(source_standard.read_bytes())
    lines = ["# locked test list (test fixture)", *unit_ids, ""]
    (standard / "tests" / "unit.txt").write_text("\n".join(lines), encoding="utf-8")
    return home
