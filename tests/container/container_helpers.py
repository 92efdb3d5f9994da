"""Helpers shared by the container tests: fixture vendors and deploy-tier runs and results."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

from kit import paths

#: Fixture vendors, each named after the way its recipe is broken.
FIXTURE_VENDORS = Path(__file__).resolve().parent / "vendors"

# Runs pytest on the deploy tier. The kit's pytest11 entry point is visible only where the
# mounted checkout carries its egg-info (an editable install); load the plugin by hand otherwise.
_RUN_PYTEST = (
    "import sys, pytest, importlib.metadata as md; "
    "auto = any(e.value == 'kit.pytest_plugin' for e in md.entry_points(group='pytest11')); "
    "sys.exit(pytest.main(([] if auto else ['-p', 'kit.pytest_plugin']) + sys.argv[1:]))"
)


@dataclass(frozen=True)
class DeployOutcome:
    test_id: str
    #: passed, failed, error or skipped (pytest's words, from the JUnit XML report).
    result: str
    message: str


def parse_junit(path: Path) -> dict[str, DeployOutcome]:
    outcomes = {}
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        name = case.get("name", "")
        test_id = name[name.index("[") + 1 : -1] if "[" in name else name
        result, message = "passed", ""
        for kind in ("failure", "error", "skipped"):
            element = case.find(kind)
            if element is not None:
                result = "failed" if kind == "failure" else kind
                message = element.get("message", "")
                break
        outcomes[test_id] = DeployOutcome(test_id, result, message)
    return outcomes


def deploy_tier_command(vendor_id: str) -> list[str]:
    return [
        "python", "-c", _RUN_PYTEST,
        "--ckit-vendor", vendor_id, "kit/tiers/deploy",
        "-q", "-p", "no:cacheprovider", "--junitxml", "/out/deploy.xml",
    ]  # fmt: skip


def run_deploy_tier_on_host(vendor_id: str, out_dir: Path) -> dict[str, DeployOutcome]:
    report = out_dir / "deploy.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "--ckit-vendor", vendor_id, "kit/tiers/deploy",
         "-q", "-p", "no:cacheprovider", "--junitxml", str(report)],
        cwd=paths.kit_home(),
        check=False,
        capture_output=True,
    )  # fmt: skip
    return parse_junit(report)
