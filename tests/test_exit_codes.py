"""Exit codes a release pipeline can act on: one per grade, apart from the kit's own failures."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

import kit.cli.cmd_keys
from kit.cli import main
from kit.errors import ExitCode, InputError
from kit.standard import load_standard

STANDARD_DIR = Path(__file__).resolve().parent.parent / "standards" / "v1"


def test_every_grade_has_its_own_exit_code_apart_from_the_kits() -> None:
    grades = load_standard().grades
    codes = [grade.exit_code for grade in grades]
    assert len(set(codes)) == len(codes)
    assert load_standard().grade("conformant").exit_code == ExitCode.OK
    reserved = {int(c) for c in ExitCode} - {ExitCode.OK, ExitCode.NOT_CONFORMANT}
    assert not reserved & set(codes)


def _standard_with(tmp_path: Path, change: dict[str, int]) -> Path:
    copy = tmp_path / "v1"
    shutil.copytree(STANDARD_DIR, copy)
    data = yaml.safe_load((copy / "standard.yaml").read_text())
    for grade in data["grades"]:
        if grade["name"] in change:
            grade["exit_code"] = change[grade["name"]]
    (copy / "standard.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return copy


@pytest.mark.parametrize(
    ("attack", "change"),
    [
        ("two_grades_share_an_exit_code", {"not-certifiable": 10}),
        ("grade_takes_the_kit_crash_code", {"not-certifiable": int(ExitCode.KIT_CRASHED)}),
        ("grade_takes_the_verification_failure_code", {"non-conformant": 4}),
    ],
)
def test_ambiguous_exit_codes_are_refused(
    tmp_path: Path, attack: str, change: dict[str, int]
) -> None:
    with pytest.raises(InputError, match="exit_code"):
        load_standard("v1", _standard_with(tmp_path, change))


def test_a_bug_in_the_kit_is_one_line_and_its_own_exit_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(_args: object) -> int:
        raise ZeroDivisionError("division by zero\nsecond line")

    monkeypatch.delenv("CKIT_DEBUG", raising=False)
    monkeypatch.setattr(kit.cli.cmd_keys, "_list", broken)
    assert main(["keys", "list"]) == ExitCode.KIT_CRASHED
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "internal error" in err and "ZeroDivisionError: division by zero" in err
