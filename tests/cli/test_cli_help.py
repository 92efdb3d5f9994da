"""Every ``ckit`` command, nested ones included, has ``--help`` with an example."""

from __future__ import annotations

import argparse

import pytest

from kit.cli import build_parser, main


def _commands(
    parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()
) -> list[tuple[str, ...]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append((*prefix, name))
                found.extend(_commands(sub, (*prefix, name)))
    return found


COMMANDS = _commands(build_parser())


def test_the_top_level_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for command in {c[0] for c in COMMANDS}:
        assert f"    {command} " in out
    assert {"run", "verify", "sign", "keys", "vendors", "standard", "image"} <= {
        c[0] for c in COMMANDS
    }


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_command_help_has_an_example(
    command: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*command, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "example" in out.lower()
    assert "ckit " + command[0] in out
