"""A worker: one pytest session that executes the stable test ids the orchestrator sends it.

It imports the vendor's modules, so it never judges: the unit and model tiers only execute
on the device here and leave their evidence for the kit's judge (``kit.execution``).

Started as ``python -m kit.runner.worker --vendor ID --commands FD --results FD --dtypes LIST
[TIER_PATH ...]``. It collects the tier suites once, announces the collected ids, then loops:
``run`` a test, ``probe`` the device's health (in the claimed dtypes, leaving out the ops the
command's ``suspects`` implicate), or ``exit``. With ``--serve-forks FD`` it is instead the
run's fork server (``kit.runner.fork_server``), from which the run's workers are forked.
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import sys
import time
from dataclasses import replace
from typing import Any

import pytest
from _pytest.runner import runtestprotocol

from kit.context import KitContext
from kit.pytest_plugin import (
    CONTEXT_KEY,
    direct_call,
    direct_verdict,
    report_verdict,
    stable_id,
)
from kit.results import Status, TestRecord, Verdict
from kit.runner.fork_server import SERVE_OPTION
from kit.runner.heap import end_process, hold_collection, settle_heap
from kit.runner.messages import (
    Probe,
    ProbeCheck,
    ProbeResult,
    RunResult,
    RunTest,
    WorkerReady,
    receive_message,
    send_message,
)
from kit.runner.probe import ProbeFinding, ProbeReport, probe_device_health
from kit.runner.protocol import ChannelClosed, LineReader
from kit.runner.reaper import die_with_parent
from kit.runner.threads import take_thread_share


def record_from_reports(
    test_id: str, reports: list[pytest.TestReport], duration: float
) -> TestRecord:
    """Fold setup/call/teardown reports into one record: the first phase that decided wins."""
    verdict = Verdict(Status.ERROR, "no phase reported a result")
    for report in reports:
        decided = report_verdict(report)
        if decided is None:
            continue
        if report.when == "teardown" and verdict.status is not Status.PASS:
            break  # a teardown problem never hides the call's own outcome
        verdict = replace(decided, status=Status.ERROR) if report.when == "teardown" else decided
        if decided.status is not Status.PASS or report.when == "teardown":
            break
    return verdict.record(test_id, duration)


class WorkerPlugin:
    def __init__(self, commands: LineReader, results_fd: int, dtypes: tuple[str, ...]) -> None:
        self.commands = commands
        self.results_fd = results_fd
        self.dtypes = dtypes
        self.context: KitContext | None = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        items = {tid: item for item in session.items if (tid := stable_id(item))}
        context = session.config.stash.get(CONTEXT_KEY, None)
        self.context = context
        if context is not None and context.device_problem is None:
            session.config.hook.pytest_ckit_warm_up(config=session.config)
        settle_heap()
        device_info = context.device_info if context else None
        ready = WorkerReady(
            ids=tuple(items),
            device=device_info.to_json() if device_info else None,
            device_problem=context.device_problem if context else "no kit context",
            pid=os.getpid(),
        )
        send_message(self.results_fd, ready)
        device = context.device if context and device_info else None
        while True:
            try:
                command = receive_message(self.commands, timeout=None)
            except ChannelClosed:
                return True
            if isinstance(command, RunTest):
                self._run(items, command.id)
            elif isinstance(command, Probe):
                self._probe(device, list(command.suspects))
            else:
                return True

    def _probe(self, device: str | None, suspects: list[str]) -> None:
        if device is None:
            report = ProbeReport((ProbeFinding("probe", "-", "no device", fatal=True),))
        else:
            report = probe_device_health(device, self.dtypes, suspects, self._announce_check)
        send_message(self.results_fd, ProbeResult(report))

    def _announce_check(self, op: str, dtype: str) -> None:
        """Before each check: if it kills the worker, the orchestrator knows which one did."""
        send_message(self.results_fd, ProbeCheck(op, dtype))

    def _run(self, items: dict[str, pytest.Item], test_id: str) -> None:
        item = items.get(test_id)
        if item is None:
            record = TestRecord(test_id, Status.ERROR, 0.0, "worker did not collect this test")
        else:
            record = self._record(item, test_id)
        send_message(self.results_fd, RunResult(test_id, record))

    def _record(self, item: pytest.Item, test_id: str) -> TestRecord:
        """Run ``item``: a plain kit test by a direct call of its function (pytest's per-test
        protocol costs more than many unit tests compute), any other through the protocol."""
        started = time.perf_counter()
        call = direct_call(item, self.context)
        if call is not None and self.context is not None:
            verdict = direct_verdict(call, self.context)
            return verdict.record(test_id, time.perf_counter() - started)
        reports = runtestprotocol(item, log=False, nextitem=None)
        return record_from_reports(test_id, reports, time.perf_counter() - started)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m kit.runner.worker")
    parser.add_argument("--vendor", required=True)
    parser.add_argument("--commands", type=int, required=True)
    parser.add_argument("--results", type=int, required=True)
    parser.add_argument("--today", required=True)
    parser.add_argument(
        "--evidence", required=True, help="where each executed test leaves its evidence"
    )
    parser.add_argument(
        "--dtypes", default="float32", help="claimed dtypes, comma-separated (the probe's)"
    )
    parser.add_argument("--flows", default=None, help="the flows the run claims, comma-separated")
    parser.add_argument("--ids", default=None, help="collect only the ids listed in this file")
    parser.add_argument("--timeout", default=None, help="the run's --timeout (seconds a test)")
    parser.add_argument("paths", nargs="+")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0].startswith(SERVE_OPTION):  # the run's fork server (kit.runner.forked)
        from kit.runner.fork_server import main as serve_forks

        return serve_forks(argv)
    args = parse_args(argv)
    hold_collection()  # until settle_heap, after start-up
    die_with_parent()
    faulthandler.enable()  # a segfault leaves a Python traceback in the worker log
    take_thread_share()
    dtypes = tuple(name for name in args.dtypes.split(",") if name)
    plugin = WorkerPlugin(LineReader(args.commands), args.results, dtypes)
    pytest_args: list[Any] = [
        # Only the kit's plugin: pytest plugins that happen to be installed in the vendor's
        # environment (hypothesis, anyio, hydra...) neither shape nor slow the tier suites.
        "--disable-plugin-autoload", "-p", "kit.pytest_plugin",
        *args.paths,
        f"--ckit-vendor={args.vendor}",
        f"--ckit-today={args.today}",
        f"--ckit-evidence={args.evidence}",
        *([f"--ckit-flows={args.flows}"] if args.flows is not None else []),
        *([f"--ckit-ids={args.ids}"] if args.ids is not None else []),
        *([f"--ckit-timeout={args.timeout}"] if args.timeout is not None else []),
        "-p", "no:cacheprovider",
        "-q", "-s",
        "-W", "ignore::pytest.PytestAssertRewriteWarning",
        "--no-header",
    ]
    return int(pytest.main(pytest_args, plugins=[plugin]))


if __name__ == "__main__":
    end_process(main())
