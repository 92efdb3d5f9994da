"""The judge: a process that never imports vendor code, turning a worker's evidence into a record.

Started as ``python -m kit.runner.judge --commands FD --results FD [--golden OUT]``. It loops
on ``judge`` commands (a test id, the evidence file a worker left, the execution's duration),
rebuilds the test's seeded inputs, computes the CPU reference and compares
(``kit.execution``), and answers with the record (with ``--golden``, the ``JudgeContext`` it
hands every judgement holds a writer that keeps artifacts under OUT). Nothing a vendor module
does in its worker can reach this process: not a patched torch function, not a patched kit
function, not a forged message.

Nor does the vendor's Python installation: the orchestrator starts this module in an
interpreter no start-up hook reaches (``kit.runner.isolation``, which names what remains: a
vendor controls its own machine, and the audit's re-verification against golden outputs is the
backstop for that).
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path

from kit.judge_context import JudgeContext
from kit.outcomes import KitOutcome, verdict_of
from kit.results import Status, TestRecord, Verdict, tier_of
from kit.runner.heap import end_process, hold_collection, settle_heap
from kit.runner.messages import (
    Judged,
    JudgeReady,
    JudgeTest,
    receive_message,
    send_message,
)
from kit.runner.protocol import ChannelClosed, LineReader
from kit.runner.threads import take_thread_share
from kit.standard import load_standard
from kit.tiers.registry import find_tier, get_tier


def judged_apart(test_id: str) -> bool:
    """Whether the kit's judge decides ``test_id`` (its tier says: every unit, model and flow
    test, and the deploy tests that compute)."""
    tier = find_tier(test_id)
    return tier is not None and tier.judged_apart(test_id)


def judge_record(
    context: JudgeContext, test_id: str, evidence_path: Path, duration: float
) -> TestRecord:
    """The record of ``test_id`` given a worker's evidence: PASS with its figures, or why not."""
    return judge_verdict(context, test_id, evidence_path).record(test_id, duration)


def judge_verdict(context: JudgeContext, test_id: str, evidence_path: Path) -> Verdict:
    """The tier's decision on the evidence: PASS with the judgement's details, or the status
    its exception maps to."""
    tier = find_tier(test_id)
    if tier is None:
        return Verdict(Status.ERROR, f"no judge for tier {tier_of(test_id)}")
    # Here, not at the top: the orchestrator imports this module (judged_apart) without torch.
    from kit.execution import load_evidence

    try:
        details = tier.judge(context, test_id, load_evidence(evidence_path))
    except Exception as exc:  # noqa: BLE001 - every verdict other than PASS is an exception
        verdict = verdict_of(exc)
        # A kit outcome's status is the kit's own verdict (a flow stage the backend does not
        # implement); any other "not implemented" here is not the device's.
        if verdict.status is Status.UNSUPPORTED and not isinstance(exc, KitOutcome):
            # The device already ran: nothing here is "not implemented".
            return replace(verdict, status=Status.ERROR)
        return verdict
    # A judgement notes nothing while it runs: the figures it returns are what a pass keeps.
    return verdict_of(None, details)


def serve(
    commands: LineReader, results_fd: int, context: JudgeContext, tiers: tuple[str, ...] = ()
) -> None:
    """Answer each ``JudgeTest`` with its verdict until the pipe closes or another message
    (``Exit``) comes. Ready at once, it warms ``tiers`` up while the run's worker starts."""
    send_message(results_fd, JudgeReady(os.getpid()))
    for name in tiers:
        get_tier(name).warm_up()
    settle_heap()
    while True:
        try:
            command = receive_message(commands, timeout=None)
        except ChannelClosed:
            return
        if not isinstance(command, JudgeTest):
            return
        record = judge_record(context, command.id, Path(command.evidence), command.duration)
        send_message(results_fd, Judged(command.id, record))


def judge_context(golden_out: Path | None) -> JudgeContext:
    """The context of every judgement: the standard, and with ``--golden OUT`` a writer that
    keeps artifacts under OUT (and logs what it could not write in OUT's workers directory)."""
    if golden_out is None:
        return JudgeContext(load_standard())
    from kit.golden import GoldenWriter
    from kit.rundir import WORKERS_DIR

    return JudgeContext(load_standard(), GoldenWriter(golden_out, golden_out / WORKERS_DIR))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kit.runner.judge")
    parser.add_argument("--commands", type=int, required=True)
    parser.add_argument("--results", type=int, required=True)
    parser.add_argument("--golden", type=Path, help="the run's output directory (--golden runs)")
    parser.add_argument("--tiers", default="", help="the run's tiers, to warm up before judging")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    hold_collection()  # until settle_heap, after start-up
    context = judge_context(args.golden)
    take_thread_share()
    tiers = tuple(name for name in args.tiers.split(",") if name)
    serve(LineReader(args.commands), args.results, context, tiers)
    return 0


if __name__ == "__main__":
    end_process(main())
