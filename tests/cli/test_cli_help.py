"""Every ``ckit`` command, nested ones included, has ``--help`` with an example."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from kit.cli import build_parser, command_module, main

KIT_ROOT = Path(__file__).resolve().parents[2]


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


def test_each_command_module_registers_the_command_its_name_says() -> None:
    """``ckit <command>`` imports only ``command_module(command)``: nothing else registers it."""
    for command in {path[0] for path in COMMANDS}:
        registered = _commands(build_parser(command_module(command)))
        assert {path[0] for path in registered} == {command}


@pytest.mark.parametrize("argv", [["vendors", "list"], ["--vendors-dir", "vendors", "vendors",
                                                         "list"]])
def test_a_command_runs_without_importing_the_others(argv: list[str]) -> None:
    """The other commands' modules (and what they import) stay unimported: a second of CPU."""
    probe = (f"import sys; from kit.cli import main; code = main({argv!r}); "
             "print(code, sorted(m for m in sys.modules if m.startswith('kit.cli.cmd_')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=False, cwd=KIT_ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == "0 ['kit.cli.cmd_vendors']"


@pytest.mark.parametrize("argv", [["bogus"], ["--help", "run"]])
def test_help_or_a_typo_meets_every_command(argv: list[str],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(argv)
    printed = capsys.readouterr()
    assert all(name in printed.out + printed.err for name in ("audit", "verify", "vendors"))
