"""The README's blocks that are CI's own commands: ``.ci/run`` calls each line of the "Set up"
block and of "Running the kit's own tests" as written, from a fresh clone, on every stop."""

from __future__ import annotations

from readme_clone import KIT_ROOT, block_commands, readme_block

SETUP_HEADING = "## Set up (two commands)"
OWN_TESTS_HEADING = "## Running the kit's own tests"


def _run_by_ci(block: str, expected: list[str]) -> None:
    commands = [" ".join(argv) for argv in block_commands(block)]
    assert commands == expected
    ci_lines = {line.strip() for line in (KIT_ROOT / ".ci" / "run").read_text().splitlines()}
    assert set(commands) <= ci_lines, f".ci/run must run {commands} as the README writes them"


def test_ci_runs_every_command_of_the_setup_block_as_written() -> None:
    _run_by_ci(readme_block(SETUP_HEADING), ["make install", "make test"])


def test_ci_runs_every_command_of_the_own_tests_block_as_written() -> None:
    _run_by_ci(readme_block(OWN_TESTS_HEADING), ["make test", "make test-heavy"])
