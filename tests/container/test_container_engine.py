"""The CLI without a Docker engine: one line saying how to start one, the environment exit code."""

from __future__ import annotations

import os
import subprocess
import sys

from kit.errors import ExitCode


def _ckit(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kit", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_image_build_without_engine_says_how_to_start_one(tmp_path):
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"}
    result = _ckit("image", "build", "--vendor", "cpu", env=env)
    assert result.returncode == ExitCode.ENVIRONMENT_ERROR
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"ckit: error: no Docker engine answers at unix://{tmp_path}/")
    assert ".ci/start-docker" in lines[0] and "dockerd" in lines[0]


def test_image_bootstrap_without_engine_fails_before_any_debootstrap(tmp_path):
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"}
    result = _ckit("image", "bootstrap", "debian12", env=env)
    assert result.returncode == ExitCode.ENVIRONMENT_ERROR
    assert "no Docker engine answers" in result.stderr
    assert not list(tmp_path.iterdir()), "nothing may be written when the engine is missing"


def test_image_commands_document_an_example():
    for action in ("bootstrap", "build"):
        result = _ckit("image", action, "--help", env=dict(os.environ))
        assert result.returncode == 0
        assert "example" in result.stdout and f"ckit image {action}" in result.stdout
