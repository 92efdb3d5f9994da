"""The judge: a process that never imports vendor code, turning a worker's evidence into a record.

Started as ``python -m kit.runner.judge --commands FD --results FD [--golden OUT]``. It loops
on ``judge`` commands (a test id, the evidence file a worker left, the execution's duration),
rebuilds the test's seeded inputs, computes the CPU reference and compares
(``kit.execution``), and answers with the record (with ``--golden``,
``kit.golden.golden_writer()`` keeps artifacts under OUT). Nothing a vendor module does in
its worker can reach this process: not a patched torch function, not a patched kit function,
not a forged message.

What it does not guard against: a vendor controls its own machine (its Python installation
could run code in every process at start-up); the audit's re-verification against golden
outputs is the backstop for that.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from kit.execution import load_evidence
from kit.outcomes import KitOutcome, classify_exception
from kit.results import Status, TestRecord, tier_of
from kit.runner.protocol import ChannelClosed, LineReader, send
from kit.standard import Standard, load_standard
from kit.tiers.registry import find_tier

_MESSAGE_LIMIT = 2000


def judged_apart(test_id: str) -> bool:
    """Whether the kit's judge decides ``test_id`` (its tier says: every unit, model and flow
    test, and the deploy tests that compute)."""
    tier = find_tier(test_id)
    return tier is not None and tier.judged_apart(test_id)


def judge_record(
    standard: Standard, test_id: str, evidence_path: Path, duration: float
) -> TestRecord:
    """The record of ``test_id`` given a worker's evidence: PASS with its figures, or why not."""
    tier = find_tier(test_id)
    if tier is None:
        return TestRecord(test_id, Status.ERROR, duration, f"no judge for tier {tier_of(test_id)}")
    try:
        details = tier.judge(standard, test_id, load_evidence(evidence_path))
    except Exception as exc:  # noqa: BLE001 - every verdict other than PASS is an exception
        status = classify_exception(exc)
        # A kit outcome's status is the kit's own verdict (a flow stage the backend does not
        # implement); any other "not implemented" here is not the device's.
        if status is Status.UNSUPPORTED and not isinstance(exc, KitOutcome):
            status = Status.ERROR  # the device already ran: nothing here is "not implemented"
        details = exc.details() if isinstance(exc, KitOutcome) else {}
        return TestRecord(test_id, status, duration, _message(exc), details)
    return TestRecord(test_id, Status.PASS, duration, "", details)


def _message(exc: BaseException) -> str:
    first_line = (str(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {first_line}"[:_MESSAGE_LIMIT]


def serve(commands: LineReader, results_fd: int, standard: Standard) -> None:
    send(results_fd, {"type": "ready", "pid": os.getpid()})
    while True:
        try:
            command = commands.receive(timeout=None)
        except ChannelClosed:
            return
        if command.get("type") != "judge":
            return
        test_id = str(command["id"])
        record = judge_record(
            standard, test_id, Path(command["evidence"]), float(command["duration"])
        )
        send(results_fd, {"type": "verdict", "id": test_id, "record": record.to_json()})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kit.runner.judge")
    parser.add_argument("--commands", type=int, required=True)
    parser.add_argument("--results", type=int, required=True)
    parser.add_argument("--golden", type=Path, help="the run's output directory (--golden runs)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.golden is not None:
        from kit.golden import configure
        from kit.rundir import WORKERS_DIR

        configure(args.golden, args.golden / WORKERS_DIR)
    threads = os.environ.get("CKIT_WORKER_THREADS")
    if threads:
        import torch

        torch.set_num_threads(int(threads))
    serve(LineReader(args.commands), args.results, load_standard())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
