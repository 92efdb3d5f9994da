"""The portal in a real browser: headless Chromium renders the index and dumps its DOM.

Chromium is installed by ``.ci/install-chromium``; without it these tests skip with that reason,
unless ``CKIT_REQUIRE_CHROMIUM=1`` (CI), where a missing browser is a failure.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from portal_helpers import PortalWorld

#: Flags for a browser that touches nothing outside its own fresh profile.
HEADLESS_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        reason = "chromium is not installed (.ci/install-chromium installs it)"
        if os.environ.get("CKIT_REQUIRE_CHROMIUM") == "1":
            pytest.fail(f"CKIT_REQUIRE_CHROMIUM=1 but {reason}")
        pytest.skip(reason)
    return found


@pytest.fixture(scope="module")
def browser() -> str:
    """The browser, looked up before the module's repository is built (skipping is cheap)."""
    return chromium()


def run_chromium(
    browser: str, profile: Path, *arguments: str
) -> subprocess.CompletedProcess[bytes]:
    command = [browser, *HEADLESS_FLAGS, f"--user-data-dir={profile}", *arguments]
    return subprocess.run(command, capture_output=True, timeout=180, check=True)


def test_index_renders_to_a_screenshot(browser: str, world: PortalWorld, tmp_path: Path) -> None:
    screenshot = tmp_path / "index.png"
    index = (world.site / "index.html").as_uri()
    run_chromium(
        browser,
        tmp_path / "profile",
        "--window-size=1200,1600",
        f"--screenshot={screenshot}",
        index,
    )
    data = screenshot.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk follows the signature
    assert (width, height) == (1200, 1600)
    # A page of tables and colour compresses to tens of kilobytes; a blank one to a few hundred
    # bytes.
    assert len(data) > 20_000


def test_dom_shows_the_matrix_and_the_failed_audit(
    browser: str, world: PortalWorld, tmp_path: Path
) -> None:
    index = (world.site / "index.html").as_uri()
    dom = run_chromium(browser, tmp_path / "profile", "--dump-dom", index).stdout.decode("utf-8")
    matrix = dom.split('<table class="matrix">', 1)[1].split("</table>", 1)[0]
    for vendor in ("acme", "bolt", "cpu"):
        assert f'<a href="vendors/{vendor}.html">{vendor}</a>' in matrix
    assert '<td class="pass" title="PASS">✓</td>' in matrix
    assert '<td class="fail" title="FAIL_NUMERIC: 3/64 elements differ">✗</td>' in matrix
    assert (
        '<td class="skip" title="NOT_APPLICABLE: optional model source timm is not installed">'
        'skipped<span class="reason">optional model source timm is not installed</span></td>'
    ) in matrix
    audits = dom.split('<table class="audits">', 1)[1].split("</table>", 1)[0]
    tampered = next(row for row in audits.split("<tr") if world.acme_tampered.run_id in row)
    assert '<span class="audit-failed">audit failed</span>' in tampered
    assert "step 7: report.json was modified after signing" in tampered
