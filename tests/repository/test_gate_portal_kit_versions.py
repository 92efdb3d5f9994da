"""``ckit gate`` and ``ckit portal`` on a real, audited repository holding two kit versions.

A bare origin cloned from the shared one (its root-signed keyring); complete reports of every
locked test built with the kit's own builder, for kits 0.1.0 and 0.2.0 (each its own digest,
both in the auditor's list of released kits), signed with the vendors' real keys, each filed
with ``ckit submit --push`` and merged. Then the real audit, gate and portal read the clone:

- cpu: kit 0.1.0 fell short 50 hours ago, kit 0.2.0 passes now: cpu passes, on kit 0.2.0;
- simnpu: kit 0.1.0 passed 100 hours ago, kit 0.2.0 fell short 80 hours ago (gpt2 and llama
  failing) and again 10 hours ago (gpt2 still failing, llama fixed, t5 new): past the 72-hour
  window of the standard's gate.yaml, so simnpu failed and the gate is closed; per test, gpt2 fails
  since 80 hours (a breach of the window) and t5 since 10.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from repository_helpers import TEST_AUTHOR, SharedRepo, field, git

import kit
from kit.cli import main
from kit.clock import RunDate
from kit.device import DeviceInfo
from kit.errors import ExitCode
from kit.formats.files import write_report_files
from kit.grading import build_report, collect_environment
from kit.hashing import kit_digest, sha256_bytes
from kit.results import NA_REASON_KEY, NotApplicableReason, Status, TestRecord
from kit.signing.sign import sign_output_dir
from kit.standard import load_standard
from kit.tiers.registry import tier_names
from kit.vendors import SkipManifest, load_vendor

NEW_KIT = "0.2.0"
#: Two of the 21 eager model tests: a models pass rate below the 95% of the standard's gate.yaml
#: (the vendors claim only eager: the program flows' tests are not applicable).
FAILING_MODELS = ("models/hf/gpt2/eager", "models/hf/llama/eager")
#: simnpu's latest result: gpt2 still failing, llama fixed, t5 newly failing.
STILL_FAILING = ("models/hf/gpt2/eager", "models/hf/t5/eager")


@dataclass(frozen=True)
class Run:
    vendor: str
    kit_version: str
    hours_ago: float
    failing: tuple[str, ...] = ()


RUNS = (
    Run("cpu", kit.__version__, 50, FAILING_MODELS),
    Run("cpu", NEW_KIT, 2),
    Run("simnpu", kit.__version__, 100),
    Run("simnpu", NEW_KIT, 80, FAILING_MODELS),
    Run("simnpu", NEW_KIT, 10, STILL_FAILING),
)


def _digest_of(kit_version: str) -> str:
    """The running kit's digest for its own version; a digest of its own for the newer kit."""
    if kit_version == kit.__version__:
        return kit_digest()
    return sha256_bytes(f"ckit {kit_version}".encode())


def _flow_of(test_id: str) -> str | None:
    parts = test_id.split("/")
    return {"flows": parts[1], "models": parts[-1]}.get(parts[0])


def _record(test_id: str, failing: tuple[str, ...]) -> TestRecord:
    flow = _flow_of(test_id)
    if flow not in (None, "eager"):
        reason = f"the vendor does not claim flow {flow}"
        details = {NA_REASON_KEY: NotApplicableReason.UNCLAIMED_FLOW.value, "reason": reason}
        return TestRecord(test_id, Status.NOT_APPLICABLE, 0.0, reason, details)
    if test_id not in failing:
        return TestRecord(test_id, Status.PASS, 0.25)
    details = {"max_abs_err": 0.0042, "max_rel_err": 0.17, "mismatched": 3, "numel": 64}
    return TestRecord(test_id, Status.FAIL_NUMERIC, 0.5, "3/64 elements differ", details)


def _report(run: Run, now: dt.datetime) -> dict[str, Any]:
    """A complete run of every locked test, as the kit's builder writes it."""
    standard = load_standard()
    finished = (now - dt.timedelta(hours=run.hours_ago)).replace(microsecond=0)
    tiers = list(tier_names())
    records = [_record(t, run.failing) for tier in tiers for t in standard.test_ids(tier)]
    report = build_report(
        records=records, standard=standard, vendor=load_vendor(run.vendor),
        skips=SkipManifest(entries=()),
        environment=collect_environment(DeviceInfo("cpu", 1, "x86_64")),
        run={"tiers": tiers, "select": [], "timeout_s": 60.0,
             "started_at": (finished - dt.timedelta(minutes=30)).isoformat(),
             "finished_at": finished.isoformat(), "workers": 1, "complete": True},
        clock=RunDate(finished.date()),
    )
    report["kit"]["version"] = run.kit_version
    report["kit"]["digest"] = _digest_of(run.kit_version)
    return report


def _submit_and_merge(origin: Path, run_dir: Path, maintainer: Path, auditor: list[str]
                      ) -> None:
    """``ckit submit --push`` (pre-checked with the ``auditor``'s choices), then the maintainer
    merges the submission's branch into main."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["submit", str(run_dir), "--repo", str(origin), "--push", *auditor])
    assert code == ExitCode.OK, printed.getvalue()
    branch = field(printed.getvalue(), "branch")
    git(["fetch", "--quiet", "origin"], maintainer)
    git([*TEST_AUTHOR, "merge", "--quiet", "--ff-only", f"origin/{branch}"], maintainer)
    git(["push", "--quiet", "origin", "main"], maintainer)


def _released_kits(path: Path) -> Path:
    path.write_text("released:\n" + "".join(
        f'  - version: "{version}"\n    digest: "{_digest_of(version)}"\n    date: 2026-11-01\n'
        for version in (kit.__version__, NEW_KIT)))
    return path


@dataclass(frozen=True)
class Audited:
    checkout: Path
    #: The auditor's trust roots and list of released kits.
    trust: list[str]
    acceptance_policy: Path

    @property
    def audit_args(self) -> list[str]:
        return [str(self.checkout), *self.trust, "--acceptance-policy", str(self.acceptance_policy)]

    def gate_args(self, *policy: str) -> list[str]:
        return ["gate", "--release", "2.13", str(self.checkout), *self.trust,
                "--acceptance-policy", str(self.acceptance_policy), *policy, "--json"]


@pytest.fixture(scope="module")
def audited(shared: SharedRepo, tmp_path_factory: pytest.TempPathFactory) -> Audited:
    base = tmp_path_factory.mktemp("kit-versions")
    origin = base / "origin.git"
    git(["clone", "--quiet", "--bare", str(shared.seed), str(origin)], base)
    maintainer = base / "maintainer"
    git(["clone", "--quiet", str(origin), str(maintainer)], base)
    now = dt.datetime.now(dt.UTC)
    trust = ["--trust-roots", str(shared.roots),
             "--released-kits", str(_released_kits(base / "released-kits.yaml"))]
    auditor = [*trust, "--acceptance-policy", str(shared.base / "policy.yaml")]
    for index, run in enumerate(RUNS):
        run_dir = base / "runs" / f"{index}-{run.vendor}-{run.kit_version}"
        write_report_files(_report(run, now), run_dir)
        sign_output_dir(run_dir, shared.keys[run.vendor], None)
        _submit_and_merge(origin, run_dir, maintainer, auditor)
    checkout = base / "checkout"
    git(["clone", "--quiet", str(origin), str(checkout)], base)
    return Audited(checkout, trust, shared.base / "policy.yaml")


def _gate(audited: Audited, capsys: pytest.CaptureFixture[str], *policy: str
          ) -> tuple[int, dict[str, dict[str, Any]]]:
    capsys.readouterr()
    code = main(audited.gate_args(*policy))
    result = json.loads(capsys.readouterr().out)
    return code, {vendor["vendor"]: vendor for vendor in result["vendors"]}


def test_the_audit_passes_both_kit_versions(
    audited: Audited, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["audit", *audited.audit_args]) == ExitCode.OK
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "PASSED: 5 submission(s) audited, 0 failed; repository checks passed"
    for vendor in ("cpu", "simnpu"):
        for version in (kit.__version__, NEW_KIT):
            heading = f"submissions/2.13/{vendor}/{version}/"
            assert [line for line in out if line.startswith(heading)], out


def test_gate_judges_each_vendor_on_its_latest_kit(
    audited: Audited, capsys: pytest.CaptureFixture[str]
) -> None:
    code, vendors = _gate(audited, capsys)
    # Closed: the standard's policy requires no vendor (the release manager lists them).
    assert code == ExitCode.GATE_NOTHING_TO_JUDGE
    assert vendors["cpu"]["verdict"] == "passes"
    assert vendors["cpu"]["kit_version"] == NEW_KIT
    simnpu = vendors["simnpu"]
    assert (simnpu["verdict"], simnpu["kit_version"]) == ("failed", NEW_KIT)
    assert simnpu["blocks_release"] and simnpu["hours"] >= 80
    assert "models pass rate" in simnpu["why"]
    # Each failing test of the latest result, since the first result of its streak.
    tests = {t["test_id"]: t for t in simnpu["failing_tests"]}
    assert sorted(tests) == sorted(STILL_FAILING)  # llama, fixed, is gone
    gpt2, t5 = (tests[test_id] for test_id in STILL_FAILING)
    assert gpt2["breach"] and gpt2["hours"] >= 80
    assert not t5["breach"] and 10 <= t5["hours"] < 72
    assert simnpu["breaches"] == 1 and vendors["cpu"]["failing_tests"] == []


def test_a_release_managers_gate_policy_decides_otherwise(
    audited: Audited, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "gate.yaml"
    standard = load_standard().file("gate.yaml").read_text()
    policy.write_text(standard.replace("required_vendors: []", "required_vendors: [cpu]")
                      .replace("max_failing_age_hours: 72", "max_failing_age_hours: 96"))
    code, vendors = _gate(audited, capsys, "--gate-policy", str(policy))
    assert code == ExitCode.OK  # cpu (required) passes; simnpu is inside the longer window
    assert vendors["cpu"]["required"] and vendors["cpu"]["verdict"] == "passes"
    assert vendors["simnpu"]["verdict"] == "fixing" and not vendors["simnpu"]["blocks_release"]


def test_max_age_hours_gates_on_each_tests_clock(
    audited: Audited, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "gate.yaml"
    standard = load_standard().file("gate.yaml").read_text()
    # Both required, and a bar simnpu's latest result (2 of 21 models failing) meets: only a
    # test's own clock can close the gate.
    policy.write_text(standard.replace("required_vendors: []", "required_vendors: [cpu, simnpu]")
                      .replace("models: 0.95", "models: 0.5")
                      .replace("min_grade: conformant-with-exceptions",
                               "min_grade: non-conformant"))
    code, vendors = _gate(audited, capsys, "--gate-policy", str(policy), "--max-age-hours", "72")
    simnpu = vendors["simnpu"]
    assert (simnpu["verdict"], simnpu["breaches"], simnpu["blocks_release"]) == ("passes", 1, True)
    assert code == ExitCode.GATE_CLOSED and not vendors["cpu"]["blocks_release"]


def _chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        if os.environ.get("CKIT_REQUIRE_CHROMIUM") == "1":
            pytest.fail("CKIT_REQUIRE_CHROMIUM=1 but chromium is not installed")
        pytest.skip("chromium is not installed (.ci/install-chromium installs it)")
    return found


def _dom(page: Path, profile: Path) -> str:
    command = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-background-networking", "--disable-component-update",
               "--disable-sync", f"--user-data-dir={profile}", "--dump-dom", page.as_uri()]
    done = subprocess.run(command, capture_output=True, timeout=180, check=True)
    return done.stdout.decode("utf-8")


@pytest.fixture(scope="module")
def site(audited: Audited, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["portal", *audited.audit_args, "-o", str(out)])
    assert code == ExitCode.OK, printed.getvalue()
    assert "(5 submissions, 0 failed their audit)" in printed.getvalue()
    return out


def test_portal_matrix_shows_each_vendors_latest_kit(site: Path, tmp_path: Path) -> None:
    dom = _dom(site / "index.html", tmp_path / "profile")
    vendors = dom.split('<table class="vendors">', 1)[1].split("</table>", 1)[0]
    for vendor in ("cpu", "simnpu"):
        row = next(row for row in vendors.split("<tr") if f"vendors/{vendor}.html" in row)
        assert f">kit {NEW_KIT}, " in row
    matrix = dom.split('<table class="matrix">', 1)[1].split("</table>", 1)[0]
    for vendor in ("cpu", "simnpu"):
        assert f'<a href="vendors/{vendor}.html">{vendor}</a>' in matrix
    model = FAILING_MODELS[0].removeprefix("models/").rsplit("/", 1)[0]
    failing = next(row for row in matrix.split("<tr") if f">{model}</th>" in row)
    assert '<td class="pass" title="PASS">✓</td>' in failing  # cpu, on kit 0.2.0
    assert '<td class="fail" title="FAIL_NUMERIC: 3/64 elements differ">✗</td>' in failing


def test_portal_vendor_page_shows_both_kit_versions(site: Path, tmp_path: Path) -> None:
    dom = _dom(site / "vendors" / "cpu.html", tmp_path / "profile")
    for version in (kit.__version__, NEW_KIT):
        assert f"<td>{version}</td>" in dom  # a row of the submissions table
        assert f"kit {version}, " in dom  # a point of the pass-rate trend


def test_portal_shows_first_failures_and_breaches(site: Path) -> None:
    index = (site / "index.html").read_text(encoding="utf-8")
    vendors = index.split('<table class="vendors">', 1)[1].split("</table>", 1)[0]
    simnpu = next(row for row in vendors.split("<tr") if "vendors/simnpu.html" in row)
    assert '<td class="num fail"><a href="vendors/simnpu.html#failing-2.13">1</a></td>' in simnpu
    cpu = next(row for row in vendors.split("<tr") if "vendors/cpu.html" in row)
    assert '<td class="num"><a href="vendors/cpu.html#failing-2.13">0</a></td>' in cpu
    page = (site / "vendors" / "simnpu.html").read_text(encoding="utf-8")
    table = page.split('<table class="failing">', 1)[1].split("</table>", 1)[0]
    rows = [row for row in table.split("<tr")[2:]]
    assert [STILL_FAILING[0] in rows[0], STILL_FAILING[1] in rows[1]] == [True, True]
    assert rows[0].startswith(' class="fail"') and "⚠ breach" in rows[0]
    assert rows[1].startswith(' class="skip"') and "⚠ breach" not in rows[1]
    assert "2 failing in the latest result, 1 for longer than 72 hours" in page
    assert "No failing test in the latest result." in (site / "vendors" / "cpu.html").read_text()
