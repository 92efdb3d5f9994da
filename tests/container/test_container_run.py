"""run_in_container for real: the deploy tier inside the CPU image, mounts, environment, exits."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import docker
import pytest

from kit import paths
from kit.container.build import BuiltImage
from kit.container.layers import build_vendor_layer
from kit.container.run import run_in_container
from kit.errors import EnvironmentProblem, InputError
from kit.tiers.deploy.cases import DEPLOY_TEST_IDS
from kit.vendors import load_vendor

# Images built from scratch (a debootstrapped base, torch and the kit installed): heavy.
pytestmark = [pytest.mark.docker, pytest.mark.heavy]

# Writes what the container sees to /out/probe.json.
_PROBE = """
import json, os
def writable(path):
    try:
        open(os.path.join(path, ".ckit-probe"), "w").close()
        return True
    except OSError:
        return False
mounts = [line.split()[4] for line in open("/proc/self/mountinfo")]
json.dump({
    "env": dict(os.environ),
    "mounts": mounts,
    "kit_writable": writable("/opt/ckit"),
    "out_writable": writable("/out"),
    "shm_kb": os.statvfs("/dev/shm").f_blocks * os.statvfs("/dev/shm").f_frsize // 1024,
    "groups": os.getgroups(),
    "devices": sorted(os.listdir("/dev")),
}, open("/out/probe.json", "w"))
"""


def _probe(vendor: str, image: str, out_dir: Path, client) -> dict:
    run = run_in_container(
        vendor, image, out_dir, ["deploy"], command=["python", "-c", _PROBE], client=client
    )
    assert run.exit_code == 0
    return json.loads((out_dir / "probe.json").read_text())


def test_deploy_tier_passes_inside_the_cpu_image(cpu_image: BuiltImage, deploy_in_container):
    outcomes = deploy_in_container("cpu", cpu_image.tag)
    assert sorted(outcomes) == sorted(DEPLOY_TEST_IDS)
    failed = {i: o.message for i, o in outcomes.items() if o.result != "passed"}
    assert failed == {}


def test_kit_is_read_only_and_no_host_secret_gets_in(
    docker_client, cpu_image: BuiltImage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("CKIT_SIGNING_KEY", "host-secret-must-stay-out")
    seen = _probe("cpu", cpu_image.tag, tmp_path, docker_client)

    assert seen["kit_writable"] is False and seen["out_writable"] is True
    user_mounts = {m for m in seen["mounts"] if m.startswith(("/opt", "/out", "/root", "/home"))}
    assert user_mounts == {"/opt/ckit", "/out"}
    env = seen["env"]
    assert "host-secret-must-stay-out" not in json.dumps(env)
    assert env["CKIT_HOME"] == env["PYTHONPATH"] == "/opt/ckit"
    assert env["HF_HUB_OFFLINE"] == "1"
    assert json.loads(env["CKIT_CONTAINER"]) == {
        "image": cpu_image.tag,
        "image_id": cpu_image.image_id,
        "base": "ckit/debian12-base:bookworm",
        "os": "debian12",
    }


def test_profile_container_options_reach_the_container(
    docker_client, kit_image: BuiltImage, tmp_path: Path, monkeypatch, removed_after
):
    host_devices = [d for d in ("/dev/fuse", "/dev/net/tun", "/dev/kvm") if os.path.exists(d)]
    vendor_dir = tmp_path / "vendors" / "passthrough-options"
    shutil.copytree(paths.kit_home() / "vendors" / "cpu", vendor_dir)
    profile = (vendor_dir / "vendor.yaml").read_text().replace("id: cpu", "id: passthrough-options")
    profile += (
        "container:\n"
        f"  devices: {json.dumps(host_devices)}\n"
        '  env: {ACME_VISIBLE_DEVICES: "0,1"}\n'
        '  shm_size: "96m"\n'
        '  group_add: ["44"]\n'
    )
    (vendor_dir / "vendor.yaml").write_text(profile)
    monkeypatch.setenv("CKIT_VENDORS_DIR", str(tmp_path / "vendors"))
    image = build_vendor_layer(docker_client, load_vendor("passthrough-options"), kit_image)
    removed_after.append(image.tag)

    seen = _probe("passthrough-options", image.tag, tmp_path / "out", docker_client)

    assert seen["env"]["ACME_VISIBLE_DEVICES"] == "0,1"
    assert seen["shm_kb"] == 96 * 1024
    assert 44 in seen["groups"]
    for device in host_devices:
        assert device.removeprefix("/dev/").split("/")[0] in seen["devices"]


def test_failing_command_exit_status_is_returned(docker_client, cpu_image: BuiltImage, tmp_path):
    output: list[str] = []
    run = run_in_container(
        "cpu",
        cpu_image.tag,
        tmp_path,
        ["deploy"],
        command=["python", "-c", "print('grading failed'); raise SystemExit(3)"],
        output=output.append,
        client=docker_client,
    )
    assert run.exit_code == 3
    assert "grading failed" in "".join(output)


def test_output_quiet_for_longer_than_the_client_timeout_still_streams(
    cpu_image: BuiltImage, tmp_path
):
    impatient = docker.from_env(timeout=2)
    output: list[str] = []
    run = run_in_container(
        "cpu", cpu_image.tag, tmp_path, ["deploy"],
        command=["sh", "-c", "echo started; sleep 5; echo finished"],
        output=output.append, client=impatient,
    )  # fmt: skip
    assert run.exit_code == 0
    assert "".join(output).split() == ["started", "finished"]


def test_command_that_cannot_start_is_an_environment_problem(
    docker_client, cpu_image: BuiltImage, tmp_path
):
    with pytest.raises(EnvironmentProblem, match="did not start"):
        run_in_container(
            "cpu", cpu_image.tag, tmp_path, ["deploy"], command=["no-such-program"],
            client=docker_client,
        )  # fmt: skip
    left = docker_client.containers.list(all=True, filters={"ancestor": cpu_image.tag})
    assert left == [], "the failed container must be removed"


def test_image_built_from_an_older_recipe_is_refused(
    docker_client, cpu_image: BuiltImage, tmp_path, monkeypatch
):
    vendors = tmp_path / "vendors"
    shutil.copytree(paths.kit_home() / "vendors" / "cpu", vendors / "cpu")
    with (vendors / "cpu" / "skips.yaml").open("a") as manifest:
        manifest.write("# edited after the image was built\n")
    monkeypatch.setenv("CKIT_VENDORS_DIR", str(vendors))
    with pytest.raises(InputError, match="rebuild it with `ckit image build --vendor cpu`"):
        run_in_container("cpu", cpu_image.tag, tmp_path / "out", ["deploy"], client=docker_client)


def test_profile_env_may_not_redirect_the_kit(
    docker_client, kit_image: BuiltImage, tmp_path, monkeypatch, removed_after
):
    vendor_dir = tmp_path / "vendors" / "env-hijack"
    shutil.copytree(paths.kit_home() / "vendors" / "cpu", vendor_dir)
    profile = (vendor_dir / "vendor.yaml").read_text().replace("id: cpu", "id: env-hijack")
    (vendor_dir / "vendor.yaml").write_text(profile + "container:\n  env: {PYTHONPATH: /evil}\n")
    monkeypatch.setenv("CKIT_VENDORS_DIR", str(tmp_path / "vendors"))
    image = build_vendor_layer(docker_client, load_vendor("env-hijack"), kit_image)
    removed_after.append(image.tag)
    with pytest.raises(InputError, match="container.env may not set PYTHONPATH"):
        run_in_container("env-hijack", image.tag, tmp_path, ["deploy"], client=docker_client)
