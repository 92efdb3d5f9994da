"""A narrowed session builds only the ids it may run: ``--ckit-ids`` (what a ``ckit run`` worker
gets: the run's plan) and ``--ckit-select`` narrow the tier suites' parametrization itself.

Each session is collected in this process (pytester's in-process run, its imports undone after):
torch and OpInfo's database are imported already, which a subprocess would import again.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kit import paths
from kit.standard import load_standard

pytest_plugins = ["pytester"]

TIERS = str(paths.package_dir() / "tiers")


def _collect(pytester: pytest.Pytester, *options: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("--collect-only", "-q", "-p", "no:cacheprovider",
                                        "--ckit-vendor=cpu", *options, f"{TIERS}/unit")


def _collected(pytester: pytest.Pytester, *options: str) -> list[str]:
    done = _collect(pytester, *options)
    assert done.ret == 0, "\n".join(done.outlines[-40:] + done.errlines[-40:])
    return [line.rpartition("[")[2].rstrip("]") for line in done.outlines if "::" in line]


def test_the_listed_ids_are_the_only_items(pytester: pytest.Pytester, tmp_path: Path) -> None:
    ids = load_standard().test_ids("unit")
    # One id of each suite of the tier (OpInfo's, the op specs'): both are narrowed.
    listed = [next(i for i in ids if i.startswith(half)) for half in ("unit/opinfo/",
                                                                      "unit/opspec/")]
    ids_file = tmp_path / "planned-ids.txt"
    ids_file.write_text("".join(f"{i}\n" for i in listed))
    assert sorted(_collected(pytester, f"--ckit-ids={ids_file}")) == sorted(listed)


def test_select_narrows_the_parametrization(pytester: pytest.Pytester) -> None:
    expected = [i for i in load_standard().test_ids("unit")
                if i.startswith("unit/opinfo/add/float32/")]
    assert sorted(_collected(pytester, "--ckit-select=unit/opinfo/add/float32/*")) == sorted(
        expected)


def test_an_unreadable_ids_file_is_a_usage_error(pytester: pytest.Pytester, tmp_path: Path
                                                 ) -> None:
    done = _collect(pytester, f"--ckit-ids={tmp_path / 'absent.txt'}")
    assert done.ret != 0
    stderr = done.stderr.str()
    assert "--ckit-ids" in stderr and "cannot read" in stderr
