"""Fixtures for the container tests: the real Docker engine, images built once per session.

Tests marked ``docker`` need an engine; without one they skip with the one-line reason, and fail
where ``CKIT_REQUIRE_DOCKER=1`` (CI: ``.ci/run`` starts an engine with ``.ci/start-docker``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import docker
import pytest
from container_helpers import FIXTURE_VENDORS, DeployOutcome, deploy_tier_command, parse_junit

from kit.container.bootstrap import BootstrapResult, bootstrap_base
from kit.container.build import BuiltImage
from kit.container.engine import connect
from kit.container.layers import BuildOptions, build_kit_image, build_vendor_layer
from kit.container.run import run_in_container
from kit.errors import EnvironmentProblem
from kit.vendors import load_vendor


@pytest.fixture(scope="session")
def docker_client() -> docker.DockerClient:
    # CI sets CKIT_REQUIRE_DOCKER=1 (.ci/run): there, no engine is a failure whatever else says.
    required = os.environ.get("CKIT_REQUIRE_DOCKER") == "1"
    if os.environ.get("CKIT_SKIP_DOCKER") == "1" and not required:
        pytest.skip("CKIT_SKIP_DOCKER=1: container tests skipped")
    try:
        return connect()
    except EnvironmentProblem as problem:
        if required:
            pytest.fail(str(problem), pytrace=False)
        # A developer machine without an engine: say why, and how CI makes this a failure.
        pytest.skip(f"{problem} (CKIT_REQUIRE_DOCKER=1 turns this skip into a failure)")


@pytest.fixture(scope="session")
def debian12_base(docker_client: docker.DockerClient) -> BootstrapResult:
    """Made once per engine: an existing tag is reused (bootstrap is idempotent)."""
    return bootstrap_base(docker_client, "debian12")


@pytest.fixture(scope="session")
def kit_image(docker_client: docker.DockerClient, debian12_base: BootstrapResult) -> BuiltImage:
    return build_kit_image(docker_client, BuildOptions())


@pytest.fixture(scope="session")
def cpu_image(docker_client: docker.DockerClient, kit_image: BuiltImage) -> BuiltImage:
    return build_vendor_layer(docker_client, load_vendor("cpu"), kit_image)


@pytest.fixture
def fixture_vendors(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CKIT_VENDORS_DIR", str(FIXTURE_VENDORS))
    return FIXTURE_VENDORS


@pytest.fixture
def deploy_in_container(
    docker_client: docker.DockerClient, tmp_path: Path
) -> Callable[[str, str], dict[str, DeployOutcome]]:
    """Run the deploy tier inside an image; returns the outcome of each stable id."""

    def run(vendor_id: str, image: str) -> dict[str, DeployOutcome]:
        lines: list[str] = []
        run_in_container(
            vendor_id,
            image,
            tmp_path,
            ["deploy"],
            command=deploy_tier_command(vendor_id),
            output=lines.append,
            client=docker_client,
        )
        report = tmp_path / "deploy.xml"
        assert report.is_file(), f"no JUnit report; container output:\n{''.join(lines)}"
        return parse_junit(report)

    return run


@pytest.fixture
def removed_after(docker_client: docker.DockerClient) -> Iterator[list[str]]:
    """Tags appended here are removed from the engine when the test ends."""
    tags: list[str] = []
    yield tags
    for tag in tags:
        try:
            docker_client.images.remove(tag, force=True)
        except docker.errors.ImageNotFound:
            pass
