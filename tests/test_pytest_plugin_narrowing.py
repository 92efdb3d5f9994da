"""A narrowed session builds only the ids it may run: ``--ckit-ids`` (what a ``ckit run`` worker
gets: the run's plan) and ``--ckit-select`` narrow the tier suites' parametrization itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kit import paths
from kit.standard import load_standard

TIERS = str(paths.package_dir() / "tiers")


def _collected(*options: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "--ckit-vendor=cpu", *options, f"{TIERS}/unit"],
        capture_output=True, text=True, check=False, env=dict(os.environ),
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return [line.rpartition("[")[2].rstrip("]") for line in done.stdout.splitlines()
            if "::" in line]


def test_the_listed_ids_are_the_only_items(tmp_path: Path) -> None:
    ids = load_standard().test_ids("unit")
    # One id of each suite of the tier (OpInfo's, the op specs'): both are narrowed.
    listed = [next(i for i in ids if i.startswith(half)) for half in ("unit/opinfo/",
                                                                      "unit/opspec/")]
    ids_file = tmp_path / "planned-ids.txt"
    ids_file.write_text("".join(f"{i}\n" for i in listed))
    assert sorted(_collected(f"--ckit-ids={ids_file}")) == sorted(listed)


def test_select_narrows_the_parametrization() -> None:
    expected = [i for i in load_standard().test_ids("unit")
                if i.startswith("unit/opinfo/add/float32/")]
    assert sorted(_collected("--ckit-select=unit/opinfo/add/float32/*")) == sorted(expected)


def test_an_unreadable_ids_file_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "--ckit-vendor=cpu", f"--ckit-ids={tmp_path / 'absent.txt'}", f"{TIERS}/unit"],
        capture_output=True, text=True, check=False,
    )
    assert done.returncode != 0
    assert "--ckit-ids" in done.stderr and "cannot read" in done.stderr
