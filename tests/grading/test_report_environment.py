"""collect_environment: the machine and software a run happened on."""

from __future__ import annotations

import importlib.metadata
import json
import platform

import pytest
import torch

from kit.device import DeviceInfo
from kit.errors import InputError
from kit.grading import collect_environment
from kit.grading.environment import CONTAINER_ENV, installed_packages
from kit.hashing import sha256_bytes

DEVICE = DeviceInfo("cpu", 1, "x86_64")


def test_records_python_torch_device_and_packages(environment):
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
