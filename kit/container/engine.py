"""The connection to the Docker engine; a missing engine is a one-line ``EnvironmentProblem``."""

from __future__ import annotations

import os

import docker
import docker.errors

from kit.errors import EnvironmentProblem

DEFAULT_ENGINE_URL = "unix:///var/run/docker.sock"
START_HINT = "start one with `sudo dockerd &` or `.ci/start-docker`"


def engine_url() -> str:
    return os.environ.get("DOCKER_HOST") or DEFAULT_ENGINE_URL


def connect(timeout_s: int = 600) -> docker.DockerClient:
    """A client whose engine answered a ping.

    ``timeout_s`` bounds single API calls; builds stream and are not cut by it.
    """
    try:
        client = docker.from_env(timeout=timeout_s)
        client.ping()
    except docker.errors.DockerException as exc:
        raise EnvironmentProblem(
            f"no Docker engine answers at {engine_url()}: {START_HINT} ({_reason(exc)})"
        ) from None
    return client


def _reason(exc: Exception) -> str:
    """The innermost, shortest explanation (docker-py nests connection errors deeply)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    for marker in ("No such file or directory", "Connection refused", "Permission denied"):
        if marker in text:
            return marker
    return text[:160]
