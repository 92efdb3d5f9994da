"""``ckit standard show`` and the help of the standard commands."""

from __future__ import annotations

import json

import pytest

from kit.cli import main
from kit.standard import load_standard


def test_show_prints_version_counts_and_skip_policy(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["standard", "show"]) == 0
    out = capsys.readouterr().out
    standard = load_standard()
    assert out.startswith(f"standard {standard.version} for PyTorch {standard.torch_release}")
    assert f"unit: {len(standard.test_ids('unit'))}" in out
    assert "unit/opinfo/add/float32/*" in out  # a never-skip pattern
    assert "unit/opinfo/*/float32/*" in out  # a required pattern


def test_show_json_is_machine_readable(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["standard", "show", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["version"] == load_standard().version
    assert summary["tests"]["unit"] == len(load_standard().test_ids("unit"))
    assert "unit/opinfo/*/float32/*" in summary["required"]["unit"]


@pytest.mark.parametrize("command", [["standard"], ["standard", "show"], ["standard", "lock"]])
def test_every_standard_command_has_help_with_an_example(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*command, "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert "example" in out and "ckit standard" in out


def test_lock_rejects_an_unknown_tier(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["standard", "lock", "--tier", "benchmarks"])
    assert exited.value.code == 2
    assert "invalid choice" in capsys.readouterr().err
