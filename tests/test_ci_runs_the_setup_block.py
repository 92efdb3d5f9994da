"""The README's two set-up commands are what CI runs: ``.ci/run`` calls each line of the "Set up"
block as written, from a fresh clone (so that block is run as written, by CI itself, on every
stop, with ``make test-heavy`` after it)."""

from __future__ import annotations

from readme_clone import KIT_ROOT, block_commands, readme_block

SETUP_HEADING = "## Set up (two commands)"


def test_ci_runs_every_command_of_the_setup_block_as_written() -> None:
    commands = [" ".join(argv) for argv in block_commands(readme_block(SETUP_HEADING))]
    assert commands == ["make install", "make test"]
    ci_lines = {line.strip() for line in (KIT_ROOT / ".ci" / "run").read_text().splitlines()}
    assert set(commands) <= ci_lines, f".ci/run must run {commands} as the README writes them"
