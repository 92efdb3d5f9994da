"""Shared helpers of the model tier tests (imported by name: the test directory is on sys.path)."""

from __future__ import annotations

import datetime as dt
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

from kit import paths
from kit.context import KitContext
from kit.pytest_plugin import build_context

MODEL_TIER_SUITE = paths.package_dir() / "tiers" / "models"
TODAY = dt.date(2026, 11, 22)


def cpu_context() -> KitContext:
    return build_context("cpu", TODAY)


def write_vendor(root: Path, vendor_id: str, dtypes: str, flows: str) -> Path:
    """A real vendor profile on the CPU device that claims only ``dtypes`` and ``flows``."""
    directory = root / vendor_id
    directory.mkdir(parents=True)
    (directory / "vendor.yaml").write_text(
        textwrap.dedent(
            f"""\
            id: {vendor_id}
            display_name: Test vendor {vendor_id}
            contact: tests <tests@example.org>
            docs_url: https://example.org/
            device_type: cpu
            dtypes: {dtypes}
            flows: {flows}
            skip_manifest: skips.yaml
            """
        ),
        encoding="utf-8",
    )
    (directory / "skips.yaml").write_text("skips: []\n", encoding="utf-8")
    return directory


def junit_outcomes(report: Path) -> dict[str, tuple[str, str]]:
    """Stable test id -> (outcome, message) from a pytest ``--junitxml`` report."""
    outcomes = {}
    for testcase in ET.parse(report).getroot().iter("testcase"):
        name = testcase.get("name", "")
        test_id = name[name.index("[") + 1 : -1]
        outcome, message = "passed", ""
        for tag in ("skipped", "failure", "error"):
            element = testcase.find(tag)
            if element is not None:
                outcome, message = tag, element.get("message", "")
        outcomes[test_id] = (outcome, message)
    return outcomes
