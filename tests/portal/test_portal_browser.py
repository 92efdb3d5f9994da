"""The portal in a real browser: headless Chromium renders the index and dumps its DOM.

Chromium is installed by ``.ci/install-chromium``; without it these tests skip with that reason,
unless ``CKIT_REQUIRE_CHROMIUM=1`` (CI), where a missing browser is a failure.
"""

from __future__ import annotations

import html as html_lib
import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest
from portal_helpers import ACME, PortalWorld

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
    for vendor, name in (("acme", ACME.name), ("bolt", "bolt"), ("cpu", "cpu")):
        assert f'<a href="vendors/{vendor}.html">{name}</a>' in matrix
    assert '<td class="pass" title="PASS">✓</td>' in matrix
    assert '<td class="fail" title="FAIL_NUMERIC: 3/64 elements differ">✗</td>' in matrix
    assert (
        '<td class="na" title="not applicable: optional model source timm is not installed">'
        "n/a</td>"
    ) in matrix
    audits = dom.split('<table class="audits">', 1)[1].split("</table>", 1)[0]
    tampered = next(row for row in audits.split("<tr") if world.acme_tampered.run_id in row)
    assert '<span class="audit-failed">audit failed</span>' in tampered
    assert "step 7: report.json was modified after signing" in tampered


#: A release manager's window: the verdict and the matrix must be in it without scrolling.
WINDOW = (1280, 800)
#: Measures, in a copy of the page, where the browser laid out what must be seen.
_MEASURE = """<script>
const box = (selector) => {
  const r = document.querySelector(selector).getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, left: r.left, right: r.right};
};
document.body.setAttribute("data-layout", JSON.stringify({
  window: [innerWidth, innerHeight],
  verdict: box("h1.verdict"),
  vendors: box("table.vendors"),
  last_vendor: box("table.vendors tbody tr:last-child"),
  reasons: box("ul.reasons"),
  matrix: box("table.matrix"),
  first_row: box("table.matrix tbody tr"),
}));
</script>"""


def artifacts_dir(tmp_path: Path) -> Path:
    """Where screenshots go: ``$CKIT_ARTIFACTS`` (CI keeps it), else the test's tmp dir."""
    directory = Path(os.environ.get("CKIT_ARTIFACTS") or tmp_path / "artifacts") / "portal"
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def layout_of(browser: str, page: Path, profile: Path) -> dict[str, Any]:
    measured = page.with_name(f"measured-{page.name}")
    html = page.read_text(encoding="utf-8")
    measured.write_text(html.replace("</body>", f"{_MEASURE}</body>"), encoding="utf-8")
    size = f"--window-size={WINDOW[0]},{WINDOW[1]}"
    dom = run_chromium(browser, profile, size, "--dump-dom", measured.as_uri()).stdout
    found = re.search(r'data-layout="([^"]+)"', dom.decode("utf-8"))
    assert found is not None, "the measuring script did not run"
    layout: dict[str, Any] = json.loads(html_lib.unescape(found.group(1)))
    return layout


def test_verdict_and_matrix_are_visible_without_scrolling(
    browser: str, world: PortalWorld, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    shutil.copytree(world.site, site)
    layout = layout_of(browser, site / "index.html", tmp_path / "profile")
    width, height = layout["window"]  # the page's viewport: the window less its frame
    assert width == WINDOW[0] and height <= WINDOW[1]
    # Can we release (the gate) and which vendor passes which tier (the vendors' rows of
    # per-tier pass rates), then the matrix's first row: all in the first window.
    for part in ("verdict", "reasons", "last_vendor", "first_row"):
        assert 0 <= layout[part]["top"] and layout[part]["bottom"] <= height, (part, layout)
    assert layout["matrix"]["top"] < height / 2, layout
    for part in ("matrix", "vendors"):  # no sideways scrolling either
        assert layout[part]["right"] <= width, (part, layout)
    screenshot = artifacts_dir(tmp_path) / "index-1280x800.png"
    size = f"--window-size={WINDOW[0]},{WINDOW[1]}"
    run_chromium(browser, tmp_path / "profile-2", size, f"--screenshot={screenshot}",
                 (world.site / "index.html").as_uri())
    assert screenshot.read_bytes().startswith(PNG_SIGNATURE)


def test_vendor_trend_renders_to_a_screenshot(
    browser: str, world: PortalWorld, tmp_path: Path
) -> None:
    """acme's page with its trend of two selections, kept for a reader to look at."""
    screenshot = artifacts_dir(tmp_path) / "vendor-acme-1280x800.png"
    size = f"--window-size={WINDOW[0]},{WINDOW[1]}"
    run_chromium(browser, tmp_path / "profile", size, f"--screenshot={screenshot}",
                 (world.site / "vendors" / "acme.html").as_uri())
    data = screenshot.read_bytes()
    assert data.startswith(PNG_SIGNATURE) and len(data) > 20_000


def test_performance_page_renders_its_table_and_plots_to_a_screenshot(
    browser: str, world: PortalWorld, tmp_path: Path
) -> None:
    """The release's performance page (every vendor's latest figures, cpu's line over its two
    runs, the runs left out), kept for a reader to look at."""
    page = world.site / "performance" / f"{world.cpu.torch_release}.html"
    screenshot = artifacts_dir(tmp_path) / "performance-1280x800.png"
    size = f"--window-size={WINDOW[0]},{WINDOW[1]}"
    run_chromium(browser, tmp_path / "profile", size, f"--screenshot={screenshot}",
                 page.as_uri())
    data = screenshot.read_bytes()
    assert data.startswith(PNG_SIGNATURE) and len(data) > 20_000
    assert struct.unpack(">II", data[16:24]) == WINDOW
