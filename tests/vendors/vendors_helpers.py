"""Builders for vendor directories used by the tests in this folder (plain functions, no mocks)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
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


def bridged_venv(venv: Path) -> Path:
    """A fresh venv at ``venv`` that sees the kit's own environment (torch, pip, setuptools, the
    editable kit) behind its own site-packages, so pip installs into it alone; its python."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
        check=True,
    )
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # addsitedir (not a bare path) so the main env's own .pth files, e.g. the editable kit, run.
    main_site = sysconfig.get_paths()["purelib"]
    bridge = f"import site; site.addsitedir({main_site!r})\n"
    (Path(purelib) / "zz-ckit-main-env.pth").write_text(bridge)
    return python


def linked_venv(venv: Path) -> Path:
    """A fresh venv at ``venv`` whose own site-packages links every entry of the kit's (torch,
    pip, setuptools, the editable kit): what a run needs, since the judge imports from the
    environment's site-packages alone, never from a directory a ``.pth`` file adds (so not
    ``bridged_venv``'s). pip installs a new package beside the links; one it would replace is
    the kit environment's own, so use it only to install a vendor's new package; its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        (Path(purelib) / entry.name).symlink_to(entry)
    return python


def offline_pip_env(**extra: str) -> dict[str, str]:
    """This process's environment for a ``ckit vendors install`` whose pip never reaches an
    index or a config file and builds without isolation (setuptools from the environment)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    return env | {
        "PIP_CONFIG_FILE": os.devnull,  # pip: ignore every config file
        "PIP_NO_INDEX": "1",
        # pip reads this inverted: "0" turns build isolation off.
        "PIP_NO_BUILD_ISOLATION": "0",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        **extra,
    }
