"""Workers forked from the run's fork server (``kit.runner.forked``) are, to the orchestrator,
what a cold start makes: its own child, in a session of their own, their output in their log,
no descriptor of the kit's but their pipes; a server that cannot serve costs a cold start."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from kit.runner.forked import SWITCH_VARIABLE, ForkedChild, ForkServers
from kit.runner.orchestrator import tier_paths
from kit.runner.pool import WorkerProcess, WorkerSpec
from kit.runner.reaper import run_reaper
from kit.test_ids import tiers_with_tests

CPU_VENDOR = Path(__file__).resolve().parents[2] / "vendors" / "cpu"


def _spec(log_dir: Path) -> WorkerSpec:
    return WorkerSpec(vendor=str(CPU_VENDOR), today="2026-11-29", paths=tier_paths(("deploy",)),
                      log_dir=log_dir, env={"PYTHONHASHSEED": "0"}, dtypes=("float32",))


def _stat(pid: int) -> list[str]:
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2:].split()  # state, ppid, pgrp, session, ...


def test_a_forked_worker_is_the_runs_child_in_its_own_session_with_only_its_pipes(
    tmp_path: Path,
) -> None:
    spec = _spec(tmp_path)
    with run_reaper():
        forks = ForkServers(tmp_path, ())
        try:
            worker = WorkerProcess(spec, 1, forks.server_for(spec.env))
            ready = worker.wait_ready()
            assert isinstance(worker.process, ForkedChild)
            pid = worker.process.pid
            assert ready.pid == pid
            _state, parent, group, session = _stat(pid)[:4]
            assert (int(parent), int(group), int(session)) == (os.getpid(), pid, pid)
            fds = {int(fd): os.readlink(f"/proc/{pid}/fd/{fd}")
                   for fd in os.listdir(f"/proc/{pid}/fd")}
            assert fds[0] == os.devnull
            assert fds[1] == fds[2] == str(tmp_path / "worker-1.log")
            assert not any(target.startswith("socket:") for target in fds.values()), fds
            worker.kill()
            assert worker.process.returncode == -9  # a signal, as a cold start's Popen tells it
        finally:
            forks.close()
    assert (tmp_path / "fork-server-1.log").is_file()


def test_a_server_that_cannot_start_costs_a_cold_start(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    with run_reaper():
        forks = ForkServers(tmp_path, ("no-such-tier",))  # its preload fails: it exits
        try:
            worker = WorkerProcess(spec, 1, forks.server_for(spec.env))
            worker.wait_ready()
            assert isinstance(worker.process, subprocess.Popen)
            again = WorkerProcess(spec, 2, forks.server_for(spec.env))  # not asked again
            again.wait_ready()
            assert isinstance(again.process, subprocess.Popen)
            worker.stop()
            again.stop()
        finally:
            forks.close()
    assert "no-such-tier" in (tmp_path / "fork-server-1.log").read_text()


def test_workers_start_cold_when_switched_off_or_outside_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    forks = ForkServers(tmp_path, ())
    assert forks.server_for({}) is None  # no subreaper here: a forked worker would not be ours
    with run_reaper():
        monkeypatch.setenv(SWITCH_VARIABLE, "0")
        assert forks.server_for({}) is None
    assert not list(tmp_path.iterdir())


def test_a_device_runtime_initialized_by_a_preload_makes_workers_start_cold() -> None:
    """On CUDA, building torch's OpInfo database asks the device's capability, which initializes
    the CUDA runtime in the server: a worker forked from it cannot use the device (seen on an
    H200), so the server refuses to fork and workers start cold. CPU torch initializes none."""
    import types

    import torch

    from kit.runner.fork_server import initialized_device_runtimes

    def runtime(initialized: bool) -> types.SimpleNamespace:
        return types.SimpleNamespace(is_initialized=lambda: initialized)

    cuda_in_use = types.SimpleNamespace(cuda=runtime(True), xpu=runtime(False))
    assert initialized_device_runtimes(cuda_in_use) == ("cuda",)
    assert initialized_device_runtimes(types.SimpleNamespace()) == ()
    assert initialized_device_runtimes(torch) == ()


def test_a_narrowed_runs_processes_import_only_the_tiers_it_has_tests_of() -> None:
    """The fork server's preloads, the worker's suites and the judge's warm-up follow the
    planned tests: a run of one unit test imports nothing of the models, flows or compile
    tiers (transformers, ExecuTorch, ONNX Runtime: seconds of CPU in each process)."""
    tiers = ("unit", "models", "flows", "distributed", "compile")
    assert tiers_with_tests(tiers, ["unit/opinfo/add/float32/0"]) == ("unit",)
    planned = ["compile/opinfo/abs/float32/0", "unit/opinfo/add/float32/0", "unit/sweep/H/bool/0"]
    assert tiers_with_tests(tiers, planned) == ("unit", "compile")  # the run's order
    assert tiers_with_tests(tiers, []) == ()
