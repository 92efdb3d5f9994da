"""collect_environment: the machine and software a run happened on."""

from __future__ import annotations

import importlib.metadata
import json
import platform
import subprocess
import sys

import pytest
import torch

from kit.device import DeviceInfo
from kit.errors import InputError
from kit.grading import collect_environment
from kit.grading.environment import CONTAINER_ENV, installed_packages
from kit.hashing import sha256_bytes

DEVICE = DeviceInfo("cpu", 1, "x86_64")


def test_records_python_torch_device_and_packages():
    # Collected here, not from the suite's session fixture: an import since (setuptools adds
    # its vendored packages' directory to sys.path) changes what is installed, as it should.
    environment = collect_environment(DEVICE)
    assert environment["python"]["version"] == platform.python_version()
    assert environment["torch"]["version"] == torch.__version__
    assert environment["device"] == {"type": "cpu", "count": 1, "name": "x86_64"}
    assert environment["machine"] == platform.machine()
    lines = installed_packages()
    assert environment["packages"] == {
        "count": len(lines),
        "sha256": sha256_bytes("".join(f"{line}\n" for line in lines).encode()),
    }
    assert environment["container"] is None


def test_a_process_without_torch_names_the_installed_torch_without_importing_it():
    # The orchestrator never imports torch; its report must still name the torch its worker ran.
    script = ("import json, sys; from kit.grading.environment import torch_build; "
              "print(json.dumps([torch_build(), 'torch' in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True, timeout=120)
    build, imported = json.loads(done.stdout)
    assert build == {"version": str(torch.__version__), "git_version": torch.version.git_version}
    assert not imported


def test_package_list_is_sorted_normalized_name_equals_version():
    lines = installed_packages()
    assert lines == sorted(set(lines))
    assert f"torch=={importlib.metadata.version('torch')}" in lines
    assert "pyyaml==" + importlib.metadata.version("PyYAML") in lines


def test_container_is_recorded_from_the_environment(monkeypatch):
    container = {"image": "ckit/cpu:1", "image_id": "sha256:" + "a" * 64,
                 "base": "debian:12", "os": "Debian GNU/Linux 12"}
    monkeypatch.setenv(CONTAINER_ENV, json.dumps(container))
    assert collect_environment(DEVICE)["container"] == container


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("{not json", "not valid JSON"),
        ('["ckit/cpu:1"]', "expected a JSON object"),
        ('{"image": "a", "image_id": "b", "base": "c"}', "field os: expected a string"),
        ('{"image": "a", "image_id": "b", "base": "c", "os": "d", "x": 1}', "unknown field 'x'"),
    ],
)
def test_malformed_container_variable_is_an_input_error(monkeypatch, value, problem):
    monkeypatch.setenv(CONTAINER_ENV, value)
    with pytest.raises(InputError, match=problem):
        collect_environment(DEVICE)
