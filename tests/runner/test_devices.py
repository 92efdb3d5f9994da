"""``--devices``: each worker slot on its own device, the same results as one device.

One narrowed cpu run (``cpu_on_device_0``) serves two modules' worth of checks: ``--devices 0``
without a visibility variable, and a run begun in a reference container that the host must not
resume (its start-up is most of its cost; neither check disturbs the other).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from runner_helpers import FIXTURES
from sharding_helpers import ckit, error_line, private_env, report_of

from kit.device import DEVICE_INDEX_ENV
from kit.errors import DeviceError, ExitCode, InputError
from kit.runner.devices import assign_slots, parse_devices
from kit.runner.merge import layout_free

pytestmark = [pytest.mark.slow(seconds=90), pytest.mark.heavy]

# Ten tests: enough for both slots to run several (the split is what is compared).
SELECT = ("--tier", "unit", "--select", "unit/opinfo/add/float32/?")
BOARD = "SimNPU-1 (pure Python) board {}"


def test_two_boards_give_the_one_device_results(tmp_path: Path) -> None:
    # simnpu's profile names its visibility variable (device_env: SIMNPU_VISIBLE_DEVICES).
    two_boards = {**private_env(), "SIMNPU_BOARDS": "2"}
    both = ckit("run", "--vendor", "simnpu", *SELECT, "--devices", "all", "--no-sign",
                "--out", str(tmp_path / "both"), env=two_boards)
    one = ckit("run", "--vendor", "simnpu", *SELECT, "--no-sign", "--out", str(tmp_path / "one"))
    # Narrowed runs whose tests all pass: partial (a complete run would be conformant).
    assert (both.returncode, one.returncode) == (ExitCode.PARTIAL,) * 2, both.stderr[-2000:]
    spread, single = report_of(tmp_path / "both"), report_of(tmp_path / "one")
    assert layout_free(spread) == layout_free(single)
    assert spread["run"]["workers"] == 2  # `all`: one worker per device
    # Each slot's worker saw only its own board, and the report names every board.
    assert spread["run"]["devices"] == [
        {"slot": 0, "index": "0", "name": BOARD.format(0)},
        {"slot": 1, "index": "1", "name": BOARD.format(1)},
    ]
    assert spread["environment"]["device"]["names"] == [BOARD.format(0), BOARD.format(1)]
    assert "devices" not in single["run"]


#: What a reference image's entry point sets (``kit.container``): the run says it ran inside.
CONTAINER_IDENTITY = {"image": "ckit/debian12-cpu:0.1.0", "image_id": "sha256:" + "0" * 64,
                      "base": "ckit/debian12-base:bookworm", "os": "debian12"}


def host_env(config: Path) -> dict[str, str]:
    """A ``ckit`` subprocess's environment on the host: fixture modules importable, a private
    config home."""
    env = {**private_env(), "XDG_CONFIG_HOME": str(config)}
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(FIXTURES / "python"), env.get("PYTHONPATH")]))
    return env


@pytest.fixture(scope="module")
def cpu_on_device_0(tmp_path_factory: pytest.TempPathFactory
                    ) -> tuple[subprocess.CompletedProcess[str], Path]:
    """One narrowed cpu run on ``--devices 0``, begun inside a reference container (as its
    image's entry point says): what it printed and its output directory."""
    base = tmp_path_factory.mktemp("cpu-on-device-0")
    in_container = {**host_env(base / "config"),
                    "CKIT_CONTAINER": json.dumps(CONTAINER_IDENTITY)}
    out = base / "run"
    done = ckit("run", "--vendor", "cpu", "--tier", "unit", "--select",
                "unit/opinfo/add/float32/0", "--devices", "0", "--no-sign", "--out", str(out),
                env=in_container)
    return done, out


def test_set_device_without_a_visibility_variable(
    cpu_on_device_0: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    # The cpu profile has no device_env: the worker selects its index with set_device.
    done, out = cpu_on_device_0
    assert done.returncode == ExitCode.PARTIAL, done.stderr[-2000:]  # narrowed, all passed
    report = report_of(out)
    assert [d["index"] for d in report["run"]["devices"]] == ["0"]
    assert report["records"][0]["status"] == "PASS"


def test_a_run_begun_in_a_container_is_not_resumed_on_the_host(
    cpu_on_device_0: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    began, out = cpu_on_device_0
    assert began.returncode == ExitCode.PARTIAL, began.stderr  # narrowed run, finished
    # The run's own config home (its journal key): only where it began stops the resume.
    resumed = ckit("run", "--resume", str(out), env=host_env(out.parent / "config"))
    assert resumed.returncode == 3
    assert "started inside a reference container" in resumed.stderr


def test_a_device_that_is_not_there_is_one_line(tmp_path: Path) -> None:
    done = ckit("run", "--vendor", "cpu", "--tier", "unit", "--select",
                "unit/opinfo/add/float32/0", "--devices", "0,3", "--no-sign",
                "--out", str(tmp_path / "run"))
    assert done.returncode == 5
    assert error_line(done) == ("ckit: error: --devices: cpu device(s) 3 not visible; the "
                                "worker sees 1 (0..0)")


def test_slots_share_devices_round_robin() -> None:
    slots = assign_slots(("0", "1"), visible=4, workers=5, device_env=None, device_type="x")
    assert slots.indices == ("0", "1", "0", "1", "0")
    assert slots.env_for(3) == {DEVICE_INDEX_ENV: "1"}
    every = assign_slots(("all",), visible=3, workers=0, device_env="ACME_VISIBLE", device_type="x")
    assert every.indices == ("0", "1", "2")
    assert every.env_for(2) == {"ACME_VISIBLE": "2"}
    with pytest.raises(DeviceError, match="not visible"):
        assign_slots(("all",), visible=0, workers=0, device_env=None, device_type="x")


@pytest.mark.parametrize("text", ["0,0", "a", "-1", "1,,2", "00", ""])
def test_malformed_devices_are_refused(text: str) -> None:
    with pytest.raises(InputError, match="--devices"):
        parse_devices(text)
