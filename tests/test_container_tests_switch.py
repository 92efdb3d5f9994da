"""The README's two ways to run the suite without the container tests, driven for real."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: A container test that would need a Docker engine (a real build).
ONE_CONTAINER_TEST = "tests/container/test_container_build.py"


def _pytest(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CKIT_")}
    environment |= env
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *args],
        cwd=REPO, env=environment, capture_output=True, text=True, timeout=600, check=False,
    )


def test_ckit_skip_docker_skips_every_container_test() -> None:
    done = _pytest(ONE_CONTAINER_TEST, CKIT_SKIP_DOCKER="1")
    assert done.returncode == 0, done.stdout[-2000:]
    last = done.stdout.strip().splitlines()[-1]
    assert " skipped" in last and "passed" not in last and "failed" not in last, last
    assert "CKIT_SKIP_DOCKER=1: container tests skipped" in done.stdout


def test_not_docker_marker_deselects_every_container_test() -> None:
    done = _pytest(ONE_CONTAINER_TEST, "-m", "not docker")
    assert done.returncode == 5, done.stdout[-2000:]  # pytest: every test deselected
    assert "deselected" in done.stdout.strip().splitlines()[-1]


def test_readme_documents_both_switches() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "`CKIT_SKIP_DOCKER=1 make test-heavy`" in readme
    assert '`.venv/bin/pytest -m "heavy and not docker"`' in readme
