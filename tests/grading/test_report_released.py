"""Released kits: every report says whether its kit digest is a released one.

The list (standards/released-kits.yaml) is left out of the kit digest, so a release can add its
own digest. No test edits the real list: they work on a copy of standards/ under CKIT_HOME.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from report_helpers import baseline_records

from kit import paths
from kit.errors import ExitCode, InputError
from kit.formats.junit import JunitFormat
from kit.formats.markdown import MarkdownFormat
from kit.grading.released import is_released, load_released_kits
from kit.hashing import RELEASED_KITS, kit_digest, released_kits_path
from kit.report import ReportSchemaError, validate_report

NOT_RELEASED = "not comparable with released-kit results"


def entry(digest: str, version: str = "0.1.0", date: str = "2027-01-31") -> str:
    return f'  - version: "{version}"\n    digest: "{digest}"\n    date: {date}\n'


@pytest.fixture
def kit_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A kit home holding a copy of the checkout's standards/ (list included)."""
    home = tmp_path / "home"
    shutil.copytree(paths.standards_dir(), home / "standards")
    monkeypatch.setenv("CKIT_HOME", str(home))
    return home


def release(digest: str) -> None:
    """Add ``digest`` to the kit home's list the way its header says a release does."""
    path = released_kits_path()
    text = path.read_text(encoding="utf-8").replace("released: []", "released:\n")
    path.write_text(text + entry(digest), encoding="utf-8")


def test_the_shipped_list_is_empty_today():
    assert released_kits_path() == paths.standards_dir() / RELEASED_KITS
    assert load_released_kits() == ()
    header = released_kits_path().read_text(encoding="utf-8")
    assert "How a release adds itself" in header and "kit_digest()" in header


def test_a_development_checkout_reports_an_unreleased_kit(make_report):
    report = make_report(baseline_records())
    assert report["kit"]["released"] is False
    assert report["grade"] == {"name": "conformant", "reasons": []}  # unreleased: same grade
    summary = MarkdownFormat().render(report).decode("utf-8")
    digest = report["kit"]["digest"]
    assert (
        f"⚠️ **This kit is not a released kit** (digest `{digest}`): results are {NOT_RELEASED}."
    ) in summary
    junit = ET.fromstring(JunitFormat().render(report))
    props = {p.get("name"): p.get("value") for p in junit.iter("property")}
    assert props["ckit.kit_released"] == "false"


def test_a_listed_digest_is_a_released_kit(kit_home: Path, make_report):
    digest = kit_digest()
    release(digest)
    (kit,) = load_released_kits()
    assert (kit.version, kit.digest, kit.date.isoformat()) == ("0.1.0", digest, "2027-01-31")
    report = make_report(baseline_records())
    assert (report["kit"]["digest"], report["kit"]["released"]) == (digest, True)
    validate_report(report)
    summary = MarkdownFormat().render(report).decode("utf-8")
    assert "not a released kit" not in summary and NOT_RELEASED not in summary


def test_another_kits_digest_does_not_release_this_one(kit_home: Path, make_report):
    release("ab" * 32)
    assert is_released("ab" * 32, load_released_kits())
    assert make_report(baseline_records())["kit"]["released"] is False


def test_adding_a_release_does_not_change_the_kit_digest(kit_home: Path):
    before = kit_digest()
    release(before)
    assert kit_digest() == before
    # Whereas any other file of the standards is covered.
    (kit_home / "standards" / "v1" / "notes.txt").write_text("x", encoding="utf-8")
    assert kit_digest() != before


def test_a_kit_home_without_the_list_has_released_nothing(kit_home: Path, make_report):
    released_kits_path().unlink()
    assert load_released_kits() == ()
    assert make_report(baseline_records())["kit"]["released"] is False


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("released: {}\n", "released: expected a list of released kits, got a mapping"),
        ("released: []\nextra: 1\n", "extra: unknown key; the keys here are released$"),
        ("released:\n  - {version: '0.1.0', digest: 'ab'}\n", "released.0.date: missing"),
        ("released:\n" + entry("AB" * 32), "released.0.digest: expected 64 lowercase"),
        ("released:\n" + entry("ab" * 32, date="'soon'"), "released.0.date: expected a real date"),
        ("released:\n" + entry("ab" * 32, version=""), "released.0.version: expected the kit"),
        ("released:\n" + entry("ab" * 32) + entry("ab" * 32, version="0.2.0"), "listed twice"),
    ],
)
def test_a_malformed_list_names_the_problem(tmp_path: Path, text: str, message: str):
    path = tmp_path / RELEASED_KITS
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        load_released_kits(path)


@pytest.mark.parametrize("value", [None, "false", 0])
def test_the_schema_requires_a_boolean_released_flag(make_report, value):
    report = make_report(baseline_records())
    report["kit"]["released"] = value
    with pytest.raises(ReportSchemaError, match="at kit/released"):
        validate_report(report)
    del report["kit"]["released"]
    with pytest.raises(ReportSchemaError, match="'released' is a required property"):
        validate_report(report)


def test_a_real_run_records_an_unreleased_kit_on_the_certified_torch(tmp_path: Path):
    """`ckit run` end to end (deploy tier: seconds): report.json and summary.md say it."""
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    for name in ("CKIT_HOME", "CKIT_SIGNING_KEY", "CKIT_CONTAINER"):
        env.pop(name, None)
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "kit", "run", "--vendor", "cpu", "--tier", "deploy", "--no-sign",
         "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=300,
    )
    # A narrowed run, not conformant; its tests pass, so it exits partial's code.
    assert done.returncode == ExitCode.PARTIAL, done.stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["kit"]["released"] is False
    assert report["environment"]["torch"]["version"].split("+")[0] == "2.13.0"
    assert report["grade"]["name"] == "non-conformant"  # not not-certifiable: right release
    assert not any("ran torch" in reason for reason in report["grade"]["reasons"])
    assert done.stdout.strip().splitlines()[-1].startswith("grade: non-conformant (partial: ")
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert f"not a released kit** (digest `{report['kit']['digest']}`)" in summary
    assert NOT_RELEASED in summary
