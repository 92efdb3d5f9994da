"""``ckit portal``: the site built from a repository of real signed submissions (conftest.py).

What a reader sees is checked in the HTML the builder wrote; what a browser shows is checked in
tests/portal/test_portal_browser.py.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from portal_helpers import MARKUP_MESSAGE, NOT_DELEGATED_TEST, UNIT_FAILURE, PortalWorld

from kit.cli import main
from kit.errors import ExitCode, InputError
from kit.portal.builder import SITE_MARKER, build_site, render_site
from kit.portal.model import group_of


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in {"href", "src"} and value is not None:
                self.links.append(value)


def links_of(page: Path) -> list[str]:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.links


def pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def _files(site: Path) -> dict[Path, bytes]:
    return {path.relative_to(site): path.read_bytes() for path in site.rglob("*") if path.is_file()}


def test_same_audit_gives_the_same_bytes(world: PortalWorld, tmp_path: Path) -> None:
    again = tmp_path / "again"
    build_site(world.audit, again)
    assert _files(world.site) == _files(again)
    assert render_site(world.audit) == render_site(world.audit)


def test_every_relative_link_resolves_to_a_file(world: PortalWorld) -> None:
    checked = 0
    for page in pages(world.site):
        for link in links_of(page):
            if re.match(r"[a-z][a-z0-9+.-]*:|//|#", link):
                continue  # absolute (a vendor's docs) or within the page
            target = (page.parent / link.split("#", 1)[0]).resolve()
            assert target.is_file(), f"{page.relative_to(world.site)} links to missing {link}"
            checked += 1
    # Every page links the stylesheet and the navigation at least.
    assert checked > 5 * len(pages(world.site))


def test_tampered_newer_submission_never_replaces_the_audited_result(world: PortalWorld) -> None:
    index = (world.site / "index.html").read_text(encoding="utf-8")
    matrix = index.split('<table class="matrix">', 1)[1].split("</table>", 1)[0]
    assert f"{world.acme_latest.run_id}.html" in matrix
    assert world.acme_tampered.run_id not in matrix
    audits = index.split('<table class="audits">', 1)[1]
    tampered_row = next(line for line in audits.splitlines() if world.acme_tampered.run_id in line)
    assert "audit failed" in tampered_row
    assert "step 7: report.json was modified after signing" in tampered_row


def test_failed_audit_page_lists_every_check_and_shows_no_result(world: PortalWorld) -> None:
    page = world.site / "submissions" / "2.13" / "acme" / "0.2.0"
    html = (page / f"{world.acme_tampered.run_id}.html").read_text(encoding="utf-8")
    assert '<li class="fail" value="1">envelope verifies' in html
    assert "is not shown as a result" in html
    assert 'class="tiers"' not in html


def test_javascript_docs_url_is_never_linked(world: PortalWorld) -> None:
    for page in pages(world.site):
        assert not any(link.lower().startswith("javascript:") for link in links_of(page)), page
    vendor = (world.site / "vendors" / "cpu.html").read_text(encoding="utf-8")
    assert 'title="not a web link, so not linked">javascript:alert(1)</span>' in vendor


def test_markup_in_a_failure_message_is_shown_as_text(world: PortalWorld) -> None:
    vendor = (world.site / "vendors" / "bolt.html").read_text(encoding="utf-8")
    assert "<script>" not in vendor
    assert "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt; differs" in vendor
    assert MARKUP_MESSAGE.startswith("<script>")


def test_vendor_page_lists_every_test_failures_first_with_error_figures(
    world: PortalWorld,
) -> None:
    html = (world.site / "vendors" / "bolt.html").read_text(encoding="utf-8")
    report = world.audit.by_key()[world.bolt].report
    assert report is not None
    rows = re.findall(r'<tr class="(pass|fail|skip)"><td class="id">([^<]+)</td>', html)
    failures_table = html.split("<h3>Failures (2)</h3>", 1)[1].split("<h3>", 1)[0]
    assert f'<td class="id">{UNIT_FAILURE}</td>' in failures_table
    assert '<td class="num">0.00125</td><td class="num">0.031</td>' in failures_table
    # The full list: every record once, after the failures table's copies of the failures.
    assert sorted(test_id for _, test_id in rows[2:]) == sorted(r.id for r in report.records)
    assert len(rows) - 2 > 10_000
    groups = re.findall(r"<details( open)?><summary><code>([^<]+)</code>", html)
    assert (" open", group_of(UNIT_FAILURE)) in groups  # a group holding a failure is unfolded
    assert ("", "unit/opinfo/mul") in groups
    for tier in ("deploy", "unit", "models"):
        assert f"<tr><td>{tier}</td>" in html


def test_vendor_page_summarizes_each_flow_with_what_its_backend_left_out(
    world: PortalWorld,
) -> None:
    html = (world.site / "vendors" / "bolt.html").read_text(encoding="utf-8")
    flows = html.split('<table class="flows">', 1)[1].split("</table>", 1)[0]
    assert "<tr><td>executorch_xnnpack</td><td>NOT_DELEGATED 1</td>" in flows
    assert "<td>aten.cumsum.default (1)</td>" in flows
    assert f'<td class="id">{NOT_DELEGATED_TEST}</td>' in html.split("<h3>Failures", 1)[1]


def test_trend_plots_each_audited_result_over_kit_versions(world: PortalWorld) -> None:
    html = (world.site / "vendors" / "acme.html").read_text(encoding="utf-8")
    svg = html.split('<svg class="trend"', 1)[1].split("</svg>", 1)[0]
    assert "kit 0.1.0, 2026-11-19" in svg and "kit 0.2.0, 2026-11-20" in svg
    assert len(re.findall(r"<circle ", svg)) == 2  # the tampered submission is not a point
    assert re.search(r'<polyline class="line" points="[0-9.]+,[0-9.]+ [0-9.]+,[0-9.]+"/>', svg)
    assert "<title>kit 0.2.0, 2026-11-20: 99.99%</title>" in svg


def test_docs_link_for_reproducing_locally(world: PortalWorld) -> None:
    html = (world.site / "vendors" / "acme.html").read_text(encoding="utf-8")
    report = world.audit.by_key()[world.acme_latest].report
    assert report is not None
    url = report.document["vendor"]["docs_url"]
    assert f'Reproduce these results locally: <a href="{url}">' in html


def test_building_over_a_directory_of_other_files_is_refused(
    world: PortalWorld, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("mine\n", encoding="utf-8")
    with pytest.raises(InputError, match="holds no portal this command built"):
        build_site(world.audit, tmp_path)
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine\n"


def test_rebuilding_replaces_a_site_it_built(world: PortalWorld, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_site(world.audit, site)
    (site / "stale.html").write_text("old\n", encoding="utf-8")
    build_site(world.audit, site)
    assert (site / SITE_MARKER).is_file() and not (site / "stale.html").exists()


def test_cli_refuses_a_repository_that_is_not_a_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["portal", str(tmp_path / "absent"), "-o", str(tmp_path / "site")])
    assert code == ExitCode.INPUT_ERROR
    assert capsys.readouterr().err == (
        f"ckit: error: repository {tmp_path / 'absent'} is not a directory\n"
    )


def test_matrix_shows_each_models_training_step_beside_its_eager_result(
    world: PortalWorld,
) -> None:
    index = (world.site / "index.html").read_text(encoding="utf-8")
    matrix = index.split('<table class="matrix">', 1)[1].split("</table>", 1)[0]
    vendors = matrix.split("</tr>", 1)[0].count("<th colspan=\"2\">")
    assert vendors >= 2
    assert matrix.count('<th class="sub">training</th>') == vendors
    assert 'scope="row">models/hf/gpt2/train<' not in matrix  # a sub-column, not a row
    eager = next(row for row in matrix.split("<tr") if 'scope="row">models/hf/gpt2/eager<' in row)
    flow = next(row for row in matrix.split("<tr")
                if 'scope="row">models/hf/gpt2/onnxruntime_cpu<' in row)
    assert eager.count("<td") == flow.count("<td") == 2 * vendors
    assert eager.count('<td class="pass"') > flow.count('<td class="pass"')
