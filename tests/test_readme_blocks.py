"""Every shell block of README.md is run as written by some test, or named below with why not.

A test runs a block by calling ``readme_block(MARKER, N)`` (``tests/readme_clone.py``: the N-th
``sh`` block after MARKER's first occurrence) with a literal or a module-level string; this
module finds those calls in ``tests/`` by reading their source. A new block of the README is
therefore either run by a test or added to this list, never untested in silence.

Run as written, in a fresh ``git clone`` of the kit:
``make certify VENDOR=cpu``, then everyday use and the two template blocks after it
(``tests/runner/test_e2e_certify_cpu.py``: the complete run in ``make test-full``, CI's heavy
suite the same blocks after a certify of a fixed shard); simnpu's worked example, its complete
run (``make test-full``; CI's heavy suite runs a fixed shard of it) and its faulty narrowed run
(heavy) (``tests/runner/test_e2e_certify_simnpu.py``); the repository walkthrough, the auditor's,
the release manager's and the vendor's blocks (``tests/repository/test_repo_readme.py``; the
vendor's hosted URL rewritten by git's ``insteadOf`` to a bare clone); in ``make test-full``,
the C++ backend's block (``tests/vendors/test_cppnpu_readme.py``), the scaling-out block's
shards, merge and boards (``tests/runner/test_scaling_readme.py``), the Slurm block on the
one-machine cluster of ``.ci/start-slurm`` (``tests/engines/test_slurm_readme.py``), the
certify steps by hand, a second complete run (``tests/runner/test_e2e_certify_cpu.py``), and the
reference-container block, the deploy, unit and model tiers complete inside the container
(``tests/container/test_container_readme.py``). The set-up block by CI itself: ``.ci/run``
runs its two lines as written from a fresh clone (``tests/test_ci_runs_the_setup_block.py``
checks they are its lines), and so are the two suites of "Running the kit's own tests"
(``make test``, ``make test-heavy``: the same test). In ``make test-full`` too: the flows block,
the whole flows tier on the three reference backends and the golden check after it
(``tests/flows/test_flows_readme.py``), and the new release's block, on torch 2.14.1 in a clone of
the kit as it was before v3 (``tests/second_release/test_new_release_readme.py``).

Run as written, from the kit's checkout, its commands in the test's own process
(``readme_clone.block_commands``): check-corpus on the shared corpus
(``tests/numerics/test_numerics_corpus.py``); in a subprocess, the plain-pytest rerun of add's
float32 tests and, in ``make test-full``, the ``-k`` line after it
(``tests/tiers/unit/test_unit_tier_pytester.py``).

Not run ("marker" N: why): none. A block a test cannot run is listed here, one line each, as
``- "MARKER" N: why``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from readme_clone import KIT_ROOT, README, ShellBlock, find_block, shell_blocks

TESTS = KIT_ROOT / "tests"
_NOT_RUN = re.compile(r'^- "(?P<marker>[^"]+)" (?P<nth>\d+): ', re.MULTILINE)


def _not_run() -> list[tuple[str, int]]:
    assert __doc__ is not None
    return [(m["marker"], int(m["nth"])) for m in _NOT_RUN.finditer(__doc__)]


def _module_strings(tree: ast.Module) -> dict[str, str]:
    return {target.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            for target in node.targets if isinstance(target, ast.Name)}


def _literal(node: ast.expr, names: dict[str, str]) -> str | int:
    if isinstance(node, ast.Constant) and isinstance(node.value, str | int):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    raise AssertionError(f"readme_block takes a literal or a module-level string: "
                         f"{ast.unparse(node)} (line {node.lineno})")


def _calls_in(path: Path) -> list[tuple[str, int]]:
    """The ``(marker, nth)`` of every ``readme_block`` call in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names, calls = _module_strings(tree), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "readme_block":
            values = [_literal(arg, names) for arg in node.args]
            values += [_literal(kw.value, names) for kw in node.keywords]
            marker, nth = values[0], values[1] if len(values) > 1 else 0
            assert isinstance(marker, str) and isinstance(nth, int), f"{path}: {values}"
            calls.append((marker, nth))
    return calls


def _run_by_tests() -> dict[tuple[str, int], Path]:
    sources = [path for path in sorted(TESTS.rglob("*.py")) if path.name != "readme_clone.py"
               and "readme_block(" in path.read_text(encoding="utf-8")]
    return {call: path for path in sources for call in _calls_in(path)}


def _where(readme: str, block: ShellBlock) -> str:
    line = readme.count("\n", 0, block.offset) + 1
    return f"README.md:{line}: {block.text.splitlines()[0]}"


def test_every_readme_shell_block_is_run_or_named_with_why_not() -> None:
    readme = README.read_text(encoding="utf-8")
    run = _run_by_tests()
    assert len(run) >= 7, run  # the certify, everyday, template, walkthrough, auditor... blocks
    run_at = {find_block(readme, *key).offset for key in run}
    not_run_at = [find_block(readme, *key).offset for key in _not_run()]
    assert len(set(not_run_at)) == len(not_run_at), "a block is named twice in the list"
    assert not run_at & set(not_run_at), "a block both run and named as not run: drop its line"
    untested = [_where(readme, b) for b in shell_blocks(readme)
                if b.offset not in run_at | set(not_run_at)]
    assert not untested, f"run these in a test, or name them in {__file__}'s list: {untested}"


def test_every_readme_command_block_is_an_sh_block() -> None:
    """A fence spelled otherwise (bash, console, none) would escape the check above."""
    readme = README.read_text(encoding="utf-8")
    fences = re.findall(r"^```(\w*)$", readme, re.MULTILINE)
    openings = fences[0::2]
    assert set(openings) <= {"sh", "yaml", "toml"}, openings
    assert not re.search(r"\n\n {4}\S", readme), "an indented code block: fence it as ```sh"
