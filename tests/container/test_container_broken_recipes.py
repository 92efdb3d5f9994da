"""Broken vendor recipes (fixture vendors under vendors/, named after the failure).

A recipe that cannot install stops the build naming the step; the others build, and the deploy
tier inside the image fails the one test that catches them, with the reason.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kit.container import images
from kit.container.build import BuiltImage, ImageBuildFailed
from kit.container.layers import build_vendor_layer
from kit.errors import ExitCode
from kit.vendors import load_vendor

# Images built from scratch (a debootstrapped base, torch and the kit installed): heavy.
pytestmark = [pytest.mark.docker, pytest.mark.heavy, pytest.mark.slow(seconds=480)]


def _build(docker_client, vendor_id: str, kit_image: BuiltImage, removed_after) -> BuiltImage:
    removed_after.append(images.vendor_image_tag(kit_image.os, vendor_id))
    return build_vendor_layer(docker_client, load_vendor(vendor_id), kit_image)


def test_recipe_install_fails_names_the_step(
    docker_client, kit_image: BuiltImage, fixture_vendors, removed_after
):
    with pytest.raises(ImageBuildFailed) as info:
        _build(docker_client, "recipe-install-fails", kit_image, removed_after)
    failure = info.value
    assert failure.step == "vendor install_script"
    assert "exit code 42" in str(failure)
    assert "download refused (HTTP 403)" in str(failure)
    assert "\n" not in str(failure)
    assert "fetching the fixture driver bundle" in failure.log_path.read_text()


def test_recipe_install_fails_through_the_cli_in_one_line(
    kit_image: BuiltImage, fixture_vendors, removed_after
):
    result = subprocess.run(
        [sys.executable, "-m", "kit", "image", "build", "--vendor", "recipe-install-fails",
         "--quiet"],
        capture_output=True,
        text=True,
        env={**os.environ},
        timeout=600,
        check=False,
    )  # fmt: skip
    assert result.returncode == ExitCode.ENVIRONMENT_ERROR
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "failed at step 'vendor install_script': exit code 42" in lines[0]


def test_recipe_replaces_torch_fails_torch_pinned(
    docker_client, kit_image, fixture_vendors, deploy_in_container, removed_after
):
    image = _build(docker_client, "recipe-replaces-torch", kit_image, removed_after)
    outcomes = deploy_in_container("recipe-replaces-torch", image.tag)
    pinned = outcomes["deploy/torch-pinned"]
    assert pinned.result == "failed"
    assert "torch 2.12.0 is installed" in pinned.message
    assert "did a vendor recipe replace torch?" in pinned.message
    assert outcomes["deploy/smoke-op"].result != "passed"


def test_recipe_breaks_pip_check_fails_pip_check(
    docker_client, kit_image, fixture_vendors, deploy_in_container, removed_after
):
    image = _build(docker_client, "recipe-breaks-pip-check", kit_image, removed_after)
    outcomes = deploy_in_container("recipe-breaks-pip-check", image.tag)
    check = outcomes["deploy/pip-check"]
    assert check.result == "failed"
    assert "ckit-fixture-absent-dist" in check.message
    others = {i: o.result for i, o in outcomes.items() if i != "deploy/pip-check"}
    assert set(others.values()) == {"passed"}, others


def test_device_invisible_fails_device_visible(
    docker_client, kit_image, fixture_vendors, deploy_in_container, removed_after
):
    image = _build(docker_client, "device-invisible", kit_image, removed_after)
    outcomes = deploy_in_container("device-invisible", image.tag)
    visible = outcomes["deploy/device-visible"]
    assert visible.result == "failed"
    assert "'nodevice' is not registered with torch" in visible.message
    assert outcomes["deploy/export-run"].result == "failed"
    assert "nodevice" in outcomes["deploy/export-run"].message
    assert outcomes["deploy/torch-pinned"].result == "passed"
