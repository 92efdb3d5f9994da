"""Images built for real on the local engine: bootstrap, kit and vendor layers, the cache."""

from __future__ import annotations

import json
import subprocess
import sys

import docker
import pytest

import kit
from kit.container import images
from kit.container.bootstrap import BootstrapResult, bootstrap_base
from kit.container.build import BuiltImage
from kit.container.layers import BuildOptions, build_kit_image, build_vendor_layer
from kit.errors import EnvironmentProblem, ExitCode, InputError
from kit.standard import current_torch_release
from kit.vendors import load_vendor

# Images built from scratch (a debootstrapped base, torch and the kit installed): heavy.
pytestmark = [pytest.mark.docker, pytest.mark.heavy]


def test_bootstrap_reuses_an_existing_base(docker_client, debian12_base: BootstrapResult):
    again = bootstrap_base(docker_client, "debian12")
    assert again.created is False
    assert again.image_id == debian12_base.image_id
    labels = docker_client.images.get(debian12_base.tag).labels
    assert labels["org.ckit.bootstrap"] == "debootstrap"
    assert labels["org.ckit.suite"] == "bookworm"


def test_bootstrapped_base_has_the_apt_sources_of_the_official_image(
    docker_client, debian12_base: BootstrapResult
):
    os_image = images.load_os_image("debian12")
    expected = os_image.bootstrap.sources_list(os_image.bootstrap.mirror)
    output = docker_client.containers.run(
        debian12_base.tag, ["cat", "/etc/apt/sources.list"], remove=True
    )
    assert output.decode() == expected
    assert "bookworm-security" in expected


def test_kit_and_vendor_images_say_what_they_were_built_from(
    debian12_base: BootstrapResult, kit_image: BuiltImage, cpu_image: BuiltImage
):
    assert kit_image.tag == f"ckit/debian12-kit:{kit.__version__}"
    assert cpu_image.tag == f"ckit/debian12-cpu:{kit.__version__}"
    assert kit_image.labels[images.LABEL_BASE] == "ckit/debian12-base:bookworm"
    assert kit_image.labels[images.LABEL_BASE_ID] == debian12_base.image_id
    assert kit_image.labels[images.LABEL_TORCH].split("+")[0] == current_torch_release()
    assert cpu_image.vendor == "cpu" and cpu_image.os == "debian12"
    assert cpu_image.image_id.startswith("sha256:") and cpu_image.size_bytes > kit_image.size_bytes


def test_unchanged_rebuild_comes_from_the_layer_cache(
    docker_client, kit_image: BuiltImage, cpu_image: BuiltImage
):
    kit_again = build_kit_image(docker_client, BuildOptions())
    cpu_again = build_vendor_layer(docker_client, load_vendor("cpu"), kit_again)
    assert (kit_again.cached, cpu_again.cached) == (True, True)
    assert (kit_again.image_id, cpu_again.image_id) == (kit_image.image_id, cpu_image.image_id)


def test_kit_layer_holds_the_pinned_torch_but_not_the_kit(docker_client, cpu_image: BuiltImage):
    probe = (
        "import importlib.util, json, torch; "
        "print(json.dumps({'torch': torch.__version__, "
        "'kit': importlib.util.find_spec('kit') is not None}))"
    )
    output = docker_client.containers.run(cpu_image.tag, ["python", "-c", probe], remove=True)
    found = json.loads(output.decode().strip().splitlines()[-1])
    assert found == {"torch": cpu_image.labels[images.LABEL_TORCH], "kit": False}


def test_cli_build_prints_the_images_it_built(cpu_image: BuiltImage):
    result = subprocess.run(
        [sys.executable, "-m", "kit", "image", "build", "--vendor", "cpu", "--quiet", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == ExitCode.OK, result.stderr
    built = json.loads(result.stdout)
    assert [(b["layer"], b["tag"], b["cached"]) for b in built] == [
        ("kit", f"ckit/debian12-kit:{kit.__version__}", True),
        ("vendor", cpu_image.tag, True),
    ]
    assert built[1]["image_id"] == cpu_image.image_id


def test_missing_base_image_says_how_to_get_one(docker_client: docker.DockerClient):
    options = BuildOptions(base="ckit-test/no-such-base:never")
    with pytest.raises(EnvironmentProblem, match="cannot be pulled") as info:
        build_kit_image(docker_client, options)
    assert "ckit-test/no-such-base:never" in str(info.value)
    assert "`ckit image bootstrap debian12` and pass --base ckit/debian12-base:bookworm" in str(
        info.value
    )
    assert "\n" not in str(info.value)


def test_registry_only_os_cannot_be_bootstrapped(docker_client: docker.DockerClient):
    with pytest.raises(InputError, match="--os rhel9 --base NAME"):
        bootstrap_base(docker_client, "rhel9")
