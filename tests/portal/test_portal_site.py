"""``ckit portal``: the site built from a repository of real signed submissions (conftest.py).

What a reader sees is checked in the HTML the builder wrote; what a browser shows is checked in
tests/portal/test_portal_browser.py.
"""

from __future__ import annotations

import dataclasses
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from portal_helpers import (
    ABSENT,
    ACME,
    BOLT_UNCLAIMED,
    MARKUP_MESSAGE,
    NOT_DELEGATED_TEST,
    UNIT_FAILURE,
    PortalWorld,
    gate_policy,
)
from submission_helpers import NOW, ids_of

from kit.cli import main
from kit.errors import ExitCode, InputError
from kit.host import host_of
from kit.portal.builder import SITE_MARKER, build_site, render_index, render_pages, render_site
from kit.portal.model import (
    group_of,
    site_model,
    submission_page,
    submission_view,
    vendor_view,
)
from kit.portal.performance import (
    PerformanceRun,
    PerformanceVendor,
    left_out_why,
    performance_page,
    release_performance,
)
from kit.report.model import Report
from kit.repository.gate import percent
from kit.repository.interface import CheckResult
from kit.repository.layout import SubmissionKey
from kit.results import PERFORMANCE_KEY
from kit.tiers.registry import tier_names
from kit.views.performance import performance_changes


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
    build_site(world.audit, again, gate_policy(), NOW)
    assert _files(world.site) == _files(again)
    policy = gate_policy()
    assert render_site(world.audit, policy, NOW) == render_site(world.audit, policy, NOW)


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
    latest = index.split('<table class="vendors">', 1)[1].split("</table>", 1)[0]
    assert f"{world.acme_latest.run_id}.html" in latest
    acme = next(row for row in latest.split("<tr")[3:] if "vendors/acme.html" in row)
    # The newer failed audit is flagged beside the result shown, never shown as one.
    assert acme.count(world.acme_tampered.run_id) == 1
    flag = re.search(r'<a class="newer-failed" href="([^"]+)" title="([^"]+)">', acme)
    assert flag is not None and flag.group(1) == submission_page(world.acme_tampered)
    assert "step 7: report.json was modified after signing" in flag.group(2)
    assert "newer-failed" not in latest.replace(acme, "")  # bolt's and cpu's newest passed
    assert world.acme_tampered.run_id not in index.split('<table class="vendors">', 1)[0]
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


def test_checks_that_could_not_run_say_not_checked_not_failed(world: PortalWorld) -> None:
    """A check skipped because an earlier one failed is shown as ckit audit prints it."""
    audit = next(a for a in world.audit.submissions if a.key == world.acme_tampered)
    skipped = CheckResult(3, "the path names its vendor", False,
                          "not checked: the envelope did not verify", skipped=True)
    view = submission_view(dataclasses.replace(audit, checks=(*audit.checks, skipped)))
    assert view.first_failure == view.checks[0]  # the failure of its own, never the skipped one
    site = dataclasses.replace(site_model(world.audit, gate_policy(), NOW), submissions=(view,))
    html = render_pages(site)[view.page]
    shown = re.findall(r'<li class="(\w+)" value="(\d+)">[^<]*?: (passed|FAILED|not checked)',
                       html.decode("utf-8"))
    assert shown == [("fail", "1", "FAILED"), ("skipped", "3", "not checked")]


def test_a_reports_own_vendor_text_is_never_shown(world: PortalWorld) -> None:
    """cpu's report names a ``javascript:`` docs link and every report a display name of its
    own: pages show neither, only what the root-signed keyring says (acme's entry)."""
    for page in pages(world.site):
        html = page.read_text(encoding="utf-8")
        assert "javascript:" not in html, page
        assert "Accelerators" not in html, page  # the reports' display names
    cpu = (world.site / "vendors" / "cpu.html").read_text(encoding="utf-8")
    assert "has no name, contact or docs link in the root-signed keyring" in cpu


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


def test_trend_joins_only_results_of_one_selection(world: PortalWorld) -> None:
    """acme's narrow run (27 tests) is a point of its own, not the step before its full runs;
    every point names its test count and links its submission."""
    html = (world.site / "vendors" / "acme.html").read_text(encoding="utf-8")
    svg = html.split('<svg class="trend"', 1)[1].split("</svg>", 1)[0]
    full = world.audit.by_key()[world.acme_latest].report
    small = world.audit.by_key()[world.acme_small].report
    assert full is not None and small is not None
    total, narrow = full.summary.overall.total, small.summary.overall.total
    assert narrow < total
    assert f"kit 0.1.0, 2026-11-18, {narrow} tests" in svg
    assert f"kit 0.1.0, 2026-11-19, {total} tests" in svg
    assert f"<title>kit 0.2.0, 2026-11-20, {total} tests: 99.99%</title>" in svg
    links = re.findall(r'<a href="\.\./([^"]+)"><circle ', svg)
    assert links == [submission_page(k) for k in (world.acme_small, world.acme_old,
                                                   world.acme_latest)]
    assert world.acme_tampered.run_id not in svg  # a failed audit is never a point
    # One line, through the two full runs alone (the narrow run is the leftmost point).
    lines = re.findall(r'<polyline class="line" points="([^"]+)">', svg)
    assert len(lines) == 1 and len(lines[0].split()) == 2
    leftmost = re.search(r'<circle class="point series-0" cx="([0-9.]+)"', svg)
    assert leftmost is not None and f"{leftmost.group(1)}," not in lines[0]
    assert "--select deploy/* models/*/*/eager (1 result)" in html


def test_name_contact_and_docs_link_come_from_the_keyring(world: PortalWorld) -> None:
    html = (world.site / "vendors" / "acme.html").read_text(encoding="utf-8")
    assert (f"<h1>{ACME.name} <small><code>acme</code></small></h1>") in html
    assert (f"{ACME.name} (contact {ACME.contact}); reproduce its results: "
            f'<a href="{ACME.docs_url}">') in html


def test_building_over_a_directory_of_other_files_is_refused(
    world: PortalWorld, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("mine\n", encoding="utf-8")
    with pytest.raises(InputError, match="holds no portal this command built"):
        build_site(world.audit, tmp_path, gate_policy(), NOW)
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine\n"


def test_rebuilding_replaces_a_site_it_built(world: PortalWorld, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_site(world.audit, site, gate_policy(), NOW)
    (site / "stale.html").write_text("old\n", encoding="utf-8")
    build_site(world.audit, site, gate_policy(), NOW)
    assert (site / SITE_MARKER).is_file() and not (site / "stale.html").exists()


def test_cli_refuses_a_repository_that_is_not_a_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["portal", str(tmp_path / "absent"), "-o", str(tmp_path / "site")])
    assert code == ExitCode.INPUT_ERROR
    assert capsys.readouterr().err == (
        f"ckit: error: repository {tmp_path / 'absent'} is not a directory\n"
    )


def _section(html: str, start: str, end: str = "</table>") -> str:
    return html.split(start, 1)[1].split(end, 1)[0]


def test_index_answers_can_we_release_first(world: PortalWorld) -> None:
    """The gate's verdict (kit.repository.gate.evaluate_gate) heads the page with its reasons:
    required acme's latest result falls short and required dyna has none."""
    index = (world.site / "index.html").read_text(encoding="utf-8")
    main = index.split("<main>", 1)[1]
    assert main.lstrip().startswith('<section id="release-2.13" class="release">\n'
                                     '<h1 class="verdict closed">PyTorch 2.13: release gate CLOSED'
                                     '</h1>')
    reasons = _section(main, '<ul class="reasons">', "</ul>")
    assert f"<li>{ABSENT} ({ABSENT}, required): missing (required): no audited result" in reasons
    assert f"<li>{ACME.name} (acme, required): fixing (" in reasons
    assert main.index('class="reasons"') < main.index('class="vendors"') < main.index(
        'class="matrix"')


def test_every_vendor_with_its_grade_native_coverage_and_clock(world: PortalWorld) -> None:
    vendors = _section((world.site / "index.html").read_text(encoding="utf-8"),
                       '<table class="vendors">')
    rows = {re.findall(r'href="vendors/([a-z]+)\.html"', row)[0]: row
            for row in vendors.split("<tr")[3:]}
    assert sorted(rows) == ["acme", "bolt", "cpu", ABSENT]
    assert '<td>none</td>' in rows[ABSENT] and "missing (required)" in rows[ABSENT]
    # A narrowed run is partial, in the words every command uses (kit.grading.wording).
    assert re.search(r'<td title="non-conformant \(partial: [^"]+">partial</td>', rows["cpu"])
    assert '">non-conformant</td>' in rows["acme"]  # a complete run that fell short
    assert re.search(r"<td>fixing \(\d+h left\)</td>", rows["acme"])
    assert '<td class="num">–</td>' in rows["bolt"]  # no dispatch recorded: no native figure
    # The native figure is the vendor's word, and the column says so.
    assert "native ops (vendor-reported)</th>" in vendors.split("<tr")[1]


def test_matrix_is_one_row_per_model_with_flows_as_sub_columns(world: PortalWorld) -> None:
    matrix = _section((world.site / "index.html").read_text(encoding="utf-8"),
                      '<table class="matrix">')
    model_ids = ids_of("models")
    models = sorted({test_id.rsplit("/", 1)[0].removeprefix("models/") for test_id in model_ids})
    flows = sorted({test_id.rsplit("/", 1)[1] for test_id in model_ids})
    assert re.findall(r'<th class="model" scope="row">([^<]+)</th>', matrix) == models
    headers = re.findall(r'<th class="flow">([^<]+(?:<wbr>[^<]+)*)</th>', matrix)
    assert [h.replace("<wbr>", "") for h in headers[:len(flows)]] == flows
    assert "skipped" not in matrix
    row = next(r for r in matrix.split("<tr>") if ">timm/resnet18</th>" in r)
    cells = re.findall(r'<td class="([a-z]+)" title="([^"]*)">([^<]+)</td>', row)
    bolt_eager = len(flows)  # acme's columns are every flow; bolt's first is eager
    assert cells[bolt_eager] == (
        "na", "not applicable: optional model source timm is not installed", "n/a")
    assert f'rowspan="{len(models)}" title="no submission of the release passed its audit">' \
           "no audited result</td>" in matrix


def test_flows_a_vendor_does_not_claim_are_folded_away(world: PortalWorld) -> None:
    """bolt's unclaimed flows (every model test "n/a") and cpu's (its narrow run covers eager
    alone) are no columns of theirs; the legend names them."""
    index = (world.site / "index.html").read_text(encoding="utf-8")
    matrix = _section(index, '<table class="matrix">')
    vendors = re.findall(r'<th class="vendor" colspan="(\d+)"(?: title="([^"]*)")?>'
                         r'<a href="vendors/([a-z]+)\.html">', matrix)
    by_vendor = {vendor: (int(span), title) for span, title, vendor in vendors}
    assert by_vendor["acme"] == (5, "")
    folded = f"folded: flows it does not claim ({', '.join(BOLT_UNCLAIMED)})"
    assert by_vendor["bolt"] == (3, folded)
    assert by_vendor["cpu"][0] == 2 and by_vendor[ABSENT] == (1, "")
    assert "does not claim flow" not in matrix  # no column of unclaimed n/a cells is left
    legend = index.split('<p class="legend">', 1)[1].split("</p>", 1)[0]
    assert f"bolt: {', '.join(BOLT_UNCLAIMED)};" in legend


def test_index_shows_each_vendors_tier_pass_rates_docs_and_the_standard(
    world: PortalWorld,
) -> None:
    index = (world.site / "index.html").read_text(encoding="utf-8")
    vendors = _section(index, '<table class="vendors">')
    _, tiers, *rows = vendors.split("<tr")[1:]
    assert re.findall(r'<th class="tier">([a-z]+)</th>', tiers) == list(tier_names())
    bolt = next(row for row in rows if "vendors/bolt.html" in row)
    report = world.audit.by_key()[world.bolt].report
    assert report is not None
    expected = [percent(report.summary.tiers[tier].rate_counting_missing() or 0.0)
                for tier in tier_names()]
    assert re.findall(r'<td class="num rate">([^<]+)</td>', bolt) == expected
    assert expected[1] != "100.00%"  # bolt's unit failure shows in its unit column
    cpu = next(row for row in rows if "vendors/cpu.html" in row)
    assert re.findall(r'<td class="num rate">([^<]+)</td>', cpu)[1] == "–"  # ran no unit tier
    acme = next(row for row in rows if "vendors/acme.html" in row)
    assert f'<a class="docs" href="{ACME.docs_url}">docs</a>' in acme
    assert ("no docs link in the root-signed keyring: set it with ckit keys vendor --vendor bolt "
            "--docs-url") in bolt
    asof = _section(index, '<p class="asof">', "</p>")
    assert asof.endswith('; results judged under <a href="standards/v2.html">standard v2</a>.')
    standard = (world.site / "standards" / "v2.html").read_text(encoding="utf-8")
    assert "<td>conformant</td>" in standard and 'class="numerics"' in standard


def test_index_opens_with_every_releases_gate_when_there_are_several(world: PortalWorld) -> None:
    """With more than one release, the first lines say each release's verdict, linked."""
    site = site_model(world.audit, gate_policy(), NOW)
    later = dataclasses.replace(site.releases[0], release="2.14",
                                gate=dataclasses.replace(site.releases[0].gate, vendors=(),
                                                         closures=()))
    assert later.gate.open != site.releases[0].gate.open
    index = render_index(dataclasses.replace(site, releases=(later, *site.releases)))
    main = index.decode("utf-8").split("<main>", 1)[1].lstrip()
    assert main.startswith('<ul class="release-gates">\n'
                           '<li class="pass"><a href="#release-2.14">PyTorch 2.14: release gate '
                           'OPEN</a> · <a href="standards/v2.html">standard v2</a></li>\n'
                           '<li class="fail"><a href="#release-2.13">PyTorch 2.13: release gate '
                           'CLOSED</a>')


def test_an_older_failed_audit_is_listed_by_its_date_among_the_results(world: PortalWorld) -> None:
    """A failed audit orders by its run id's time, a result by its report's, in one format: an
    old failed submission is never listed as the newest."""
    audits = {audit.key: audit for audit in world.audit.submissions}
    digest = world.acme_tampered.run_id.split("-", 1)[1]
    old_key = dataclasses.replace(world.acme_tampered, run_id=f"20261101T000000Z-{digest}")
    old_failure = submission_view(dataclasses.replace(audits[world.acme_tampered], key=old_key))
    assert not old_failure.passed and old_failure.finished_sort == "20261101T000000Z"
    views = [submission_view(audit) for key, audit in audits.items()
             if key.vendor == "acme" and key != world.acme_tampered]
    for view in views:  # a result's time, as its run id names it
        assert view.finished_sort == view.key.run_id.split("-", 1)[0]
    acme = vendor_view("acme", [*views, old_failure], ACME)
    assert [s.key for s in acme.submissions] == [
        world.acme_latest, world.acme_old, world.acme_small, old_key]


def _performance_page(world: PortalWorld) -> str:
    index = (world.site / "index.html").read_text(encoding="utf-8")
    page = performance_page(world.cpu.torch_release)
    assert f'<a href="{page}">Model performance</a>' in index
    return (world.site / page).read_text(encoding="utf-8")


def test_performance_table_holds_each_vendors_latest_figures(world: PortalWorld) -> None:
    html = _performance_page(world)
    table = _section(html, '<table class="performance">')
    bert = next(row for row in table.split("<tr>") if "models/hf/bert/eager</th>" in row)
    # acme's latest (42 ms, batch 2: 47.5/s), bolt timed no bert, cpu's latest (25 ms), dyna
    # never submitted.
    assert re.findall(r'<td class="num" title="[^"]*">([^<]+)</td>', bert) == [
        "42.1 ms", "47.5/s", "–", "–", "25.1 ms", "79.7/s", "–", "–"]
    assert "PASS: spread ±0.416%; peak memory not reported" in bert
    assert "bolt: host Bolt Host CPU 9000, 2 of 2 CPUs" in html
    vendor = (world.site / "vendors" / "bolt.html").read_text(encoding="utf-8")
    page = performance_page(world.bolt.torch_release)
    assert f'<a href="../{page}">Model performance of the release</a>' in vendor
    assert "dyna: no audited result of the release; 0 runs joined" in html


def test_latency_lines_join_only_comparable_runs_and_say_what_was_left_out(
    world: PortalWorld,
) -> None:
    html = _performance_page(world)
    plots = html.split('<svg class="latency"')[1:]
    assert re.findall(r'aria-label="median latency of ([^ ]+) per run"', html) == [
        "models/hf/bert/eager", "models/hf/resnet/eager"]
    resnet = plots[1]
    # cpu's two runs (same host, kit, standard) make its one line; acme's older runs are of
    # another kit, so its newest is a point alone; bolt's single run, another point.
    (line,) = re.findall(r'<polyline class="line vendor-(\d)"', resnet)
    assert line == "2" and resnet.count("<circle") == 4
    for key in (world.cpu_old, world.cpu, world.acme_latest, world.bolt):
        assert submission_page(key) in resnet
    left_out = _section(html, '<ul class="left-out">', "</ul>")
    for key in (world.acme_old, world.acme_small):
        assert f"<code>{key.run_id}</code></a>: kit 0.1.0, not the latest result&#39;s 0.2.0" \
            in left_out
    assert left_out.count("<li>") == 2


def _reports(world: PortalWorld) -> dict[SubmissionKey, Report]:
    return {s.key: s.report for s in world.audit.submissions if s.report is not None}


def test_a_run_on_another_host_is_left_out_and_never_compared(world: PortalWorld) -> None:
    reports = _reports(world)
    cpu, cpu_old, bolt = reports[world.cpu], reports[world.cpu_old], reports[world.bolt]
    host = host_of(cpu.environment)
    assert host is not None and host == host_of(cpu_old.environment)
    moved = dataclasses.replace(cpu_old, environment={**cpu_old.environment,
                                                      "cpu_model": "Another CPU"})
    latest = PerformanceRun(cpu, "latest.html", "latest")
    assert left_out_why(PerformanceRun(moved, "old.html", "old"), latest) == \
        "another host (cpu_model not the same)"
    assert left_out_why(PerformanceRun(cpu_old, "old.html", "old"), latest) is None
    # ckit diff's ratios: the same figures on bolt's host do not compare with cpu's.
    resnet = {"models/hf/resnet/eager"}
    (change,) = performance_changes(cpu_old, bolt, resnet)
    assert change.flag is None
    assert change.not_comparable == "measured on different hosts (cpu_model not the same)"
    (same_host,) = performance_changes(cpu_old, cpu, resnet)
    assert same_host.not_comparable is None and same_host.flag == "slower"


RESNET = "models/hf/resnet/eager"


def _with_figures(report: Report, data: object) -> Report:
    """``report`` with resnet's figures replaced by ``data`` (what a signed report may hold)."""
    records = tuple(dataclasses.replace(r, details={**r.details, PERFORMANCE_KEY: data})
                    if r.id == RESNET else r for r in report.records)
    return dataclasses.replace(report, read_records=records)


def test_forged_figures_or_another_worker_setup_leave_a_run_out_in_one_line(
    world: PortalWorld,
) -> None:
    reports = _reports(world)
    latest = PerformanceRun(reports[world.cpu], "latest.html", "latest")
    old = reports[world.cpu_old]
    (record,) = [r for r in old.records if r.id == RESNET]
    figures = record.details[PERFORMANCE_KEY]
    forged = _with_figures(old, {**figures, "latencies_s": "fast"})
    more_threads = _with_figures(old, {**figures, "host": {**figures["host"], "threads": 8}})
    runs = (PerformanceRun(forged, "forged.html", "forged"),
            PerformanceRun(more_threads, "threads.html", "threads"), latest)
    page = release_performance("2.13", [PerformanceVendor("cpu", "cpu", "cpu.html", runs,
                                                          latest)])
    assert page is not None
    assert [(o.run_id, o.why) for o in page.left_out] == [
        ("forged", "its figures cannot be read: performance.latencies_s: expected a "
                   "list of seconds >= 0"),
        ("threads", "timed with other torch threads or CPUs than the latest result")]
    assert page.vendors[0].joined == 1 and page.rows[1].cells[0].latency == "12.1 ms"
