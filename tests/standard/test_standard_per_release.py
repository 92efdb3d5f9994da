"""A standard per PyTorch release: ``ckit standard new`` and ``list``, a torch no standard
certifies refused before any test, and ``--canary`` runs on it (never a certificate).

Only torch 2.13's CPU wheel is here, so "a torch the kit has no standard for" is made by a kit
home whose standards name another release for the installed torch.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from kit import paths
from kit.cli import main
from kit.errors import ExitCode
from kit.report.read import read_report
from kit.results import Status
from kit.standard import load_standard
from kit.standard.catalogue import carried_versions, current_version

TINY = "unit/opinfo/add/float32/0"
OTHER_RELEASE = "2.12.0"


def _home_copy(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(paths.standards_dir(), home / "standards")
    shutil.copytree(paths.vendors_dir() / "cpu", home / "vendors" / "cpu")
    return home


@pytest.fixture
def other_release_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A kit home whose every standard certifies PyTorch 2.12.0, not the installed 2.13."""
    home = _home_copy(tmp_path)
    for standard_file in (home / "standards").glob("v*/standard.yaml"):
        text = standard_file.read_text(encoding="utf-8")
        standard_file.write_text(
            re.sub(r'(?m)^torch_release: "[^"]*"', f'torch_release: "{OTHER_RELEASE}"', text),
            encoding="utf-8")
    monkeypatch.setenv("CKIT_HOME", str(home))
    return home


def _run(out: Path, *extra: str) -> int:
    return main(["run", "--vendor", "cpu", "--tier", "unit", "--select", TINY, "--no-sign",
                 "--out", str(out), *extra])


def test_a_torch_no_standard_certifies_is_refused_before_any_test(
    other_release_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert _run(out) == ExitCode.ENVIRONMENT_ERROR
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert f"certifies PyTorch {OTHER_RELEASE}" in err and "ckit run --canary" in err
    assert not out.exists()  # refused before a worker started or a file was written


def test_a_canary_run_is_graded_and_never_certified(
    other_release_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "canary"
    code = _run(out, "--canary")
    # The current standard's own format (report.json or a body): read as every reader reads it.
    report = read_report(out).report
    assert report.run.canary is True
    assert report.grade.name == "not-certifiable"
    # Its why-line says what a canary's reader does next, not only "install the other torch".
    why = report.grade.reasons[0]
    assert why.startswith("a canary: ran torch 2.13") and "`ckit standard new`" in why, why
    assert code == load_standard().grade("not-certifiable").exit_code
    assert {r.status for r in report.records} == {Status.PASS}
    capsys.readouterr()
    assert main(["show", str(out), "--format", "comment"]) == 0
    comment = capsys.readouterr().out
    assert comment.startswith("### ckit canary run (not a certificate): `cpu` on torch `2.13")
    assert "`not-certifiable`" in comment


VANISHED = "unit/opinfo/add/float32/9999"


def test_a_canary_lists_tests_the_release_lacks_or_changed_apart_from_the_vendors(
    other_release_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A locked sample the installed OpInfo no longer generates is NOT_APPLICABLE (not in this
    release), never the vendor's ERROR; a locked digest the installed inputs do not match marks
    the record, and ``ckit show`` and the comment list both."""
    for unit_list in (other_release_home / "standards").glob("v*/tests/unit.txt"):
        text = unit_list.read_text(encoding="utf-8")
        text = re.sub(rf"(?m)^{re.escape(TINY)} \S+$", f"{TINY} 0000000000000000", text)
        unit_list.write_text(text + f"{VANISHED} 0123456789abcdef\n", encoding="utf-8")
    out = tmp_path / "canary"
    main(["run", "--vendor", "cpu", "--tier", "unit", "--select", TINY, "--select", VANISHED,
          "--no-sign", "--canary", "--out", str(out)])
    records = {r.id: r for r in read_report(out).report.records}
    assert records[VANISHED].status is Status.NOT_APPLICABLE
    assert records[VANISHED].details["na_reason"] == "not-in-release"
    assert records[TINY].status is Status.PASS
    changed = records[TINY].details["inputs_changed"]
    assert changed["locked"] == "0000000000000000" and len(changed["now"]) == 16
    capsys.readouterr()
    assert main(["show", str(out)]) == 0
    shown = capsys.readouterr().out
    assert f"not in release: {VANISHED}" in shown and f"inputs changed: {TINY}" in shown
    assert main(["show", str(out), "--format", "comment"]) == 0
    comment = capsys.readouterr().out
    assert "1 tests of standard" in comment and f"- inputs changed: `{TINY}`" in comment


def test_a_canary_on_a_certified_torch_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(tmp_path / "run", "--canary") == ExitCode.INPUT_ERROR
    assert "run without --canary" in capsys.readouterr().err


def test_standard_list_names_each_release_and_the_current_one(
    capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["standard", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    carried = carried_versions()
    assert [line.split(":")[0] for line in lines[:-1]] == list(carried)
    [current] = [line for line in lines if line.endswith("(current)")]
    assert current.startswith(f"{current_version()}: PyTorch 2.13.0,")
    assert lines[-1].startswith("installed torch: 2.13.0")


@pytest.mark.parametrize(("args", "says"), [
    (["--torch", "2.99.0"], "install torch 2.99.0 first"),
    (["--version", "v1"], "already exists"),
    (["--version", "three"], "expected vN"),
    (["--from", "v9"], "standard 'v9' is not carried"),  # a parent that does not exist
])
def test_standard_new_refuses_in_one_line_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    args: list[str], says: str,
) -> None:
    home = _home_copy(tmp_path)
    monkeypatch.setenv("CKIT_HOME", str(home))
    before = sorted(p.name for p in (home / "standards").iterdir())
    assert main(["standard", "new", "--from", "v2", *args]) == ExitCode.INPUT_ERROR
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err, err
    assert sorted(p.name for p in (home / "standards").iterdir()) == before


def test_standard_new_interrupted_half_way_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C while the lists are written: no half a standard stays (it would be carried)."""
    import kit.cli.standard_new as standard_new

    home = _home_copy(tmp_path)
    monkeypatch.setenv("CKIT_HOME", str(home))
    before = sorted(p.name for p in (home / "standards").iterdir())

    def interrupted(standard: object, tiers: object, **_: object) -> None:
        (home / "standards" / carried_versions()[-1] / "tests").mkdir()
        (home / "standards" / carried_versions()[-1] / "tests" / "deploy.txt").write_text("x")
        raise KeyboardInterrupt

    version = f"v{int(carried_versions()[-1][1:]) + 1}"
    monkeypatch.setattr(standard_new, "lock_tiers", interrupted)
    assert main(["standard", "new", "--from", "v2", "--version", version]) == ExitCode.INTERRUPTED
    assert sorted(p.name for p in (home / "standards").iterdir()) == before


def test_standard_new_without_from_extends_the_newest_standard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's ``ckit standard new``: the parent is the newest carried standard (its lists
    are not regenerated here: ``tests/second_release`` does that on a second release)."""
    import kit.cli.standard_new as standard_new

    home = _home_copy(tmp_path)
    monkeypatch.setenv("CKIT_HOME", str(home))
    newest = carried_versions()[-1]
    made = f"v{int(newest[1:]) + 1}"

    def inherited_lists(*args: object, **kwargs: object) -> None:
        (home / "standards" / made / "tests").mkdir()

    monkeypatch.setattr(standard_new, "lock_tiers", inherited_lists)
    assert main(["standard", "new"]) == ExitCode.OK
    assert carried_versions()[-1] == made
    assert load_standard(made).extends == newest
    assert f"(against {newest})" in capsys.readouterr().out
