"""The fork server: a run's workers start from a process that has already imported what every
worker imports, instead of each paying for it again.

A worker's start-up is mostly imports (torch, pytest, the kit, OpInfo's database, transformers:
about 6 s of CPU), and a run starts a worker again after every crash, hang or fatal device
error, and one per slot. The server is started once per run and per worker environment, in
exactly the environment a worker gets (``kit.runner.forked``), imports the worker's module
and the preloads of the run's tiers (``Tier.preloads``: no vendor code, no device), and then
answers each request with a worker: it forks, and the child becomes ``kit.runner.worker``'s
``main`` with the request's arguments, its pipes and its log.

The worker must be, for the orchestrator, what ``subprocess.Popen`` would have started: a
child of the orchestrator's own (so its exit status is the orchestrator's to read), in a
session and process group of its own (so a kill takes its children too), stdout and stderr in
its log, no other descriptor open. So the server forks twice: the intermediate process exits
at once and the worker, orphaned, becomes the orchestrator's child (the run's process is a
child subreaper, ``kit.runner.reaper``); the worker reports its pid only once its session is
its own.

Started as ``python -m kit.runner.worker --serve-forks FD [--tiers LIST]``: to the start-up
hooks of the vendor's environment (a ``.pth`` file, ``sitecustomize``) the server is a worker,
as each worker forked from it is, whose ``sys.orig_argv`` is what a cold start's would be.
Requests and replies are one JSON message each on a ``SOCK_SEQPACKET`` socket, a request
carrying the worker's command pipe, result pipe and log as descriptors.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import sys
import time
import traceback
from typing import Any, NoReturn

from kit.runner.heap import end_process

#: How long a new worker waits for its intermediate parent to be gone (it exits at once).
_REPARENT_WAIT_S = 10.0
#: The module each forked worker runs, as ``python -m`` would.
WORKER_MODULE = "kit.runner.worker"
#: The worker's option that makes it a fork server instead (``kit.runner.worker.main``).
SERVE_OPTION = "--serve-forks"
#: A request's worker arguments fit well within this (the paths of the run's tier suites).
MAX_MESSAGE_BYTES = 1 << 16
#: torch's in-tree device modules whose runtime a child forked after its initialization cannot
#: use ("Cannot re-initialize CUDA in forked subprocess"). A preload can initialize one without
#: asking: torch's own test databases query the CUDA device's capability while they are built.
IN_TREE_DEVICE_MODULES = ("cuda", "xpu", "mtia")


def preload(tiers: tuple[str, ...]) -> None:
    """Import what each worker imports before its first test: its own module and the tiers'
    preloads."""
    import importlib

    from kit.tiers.registry import get_tier

    importlib.import_module(WORKER_MODULE)  # by name: run by name, as ``-m`` runs it
    for name in tiers:
        for module in get_tier(name).preloads:
            importlib.import_module(module)


def initialized_device_runtimes(torch_module: Any) -> tuple[str, ...]:
    """The in-tree device runtimes ``torch_module`` has initialized in this process (forked
    workers could not use them)."""
    found = []
    for name in IN_TREE_DEVICE_MODULES:
        is_initialized = getattr(getattr(torch_module, name, None), "is_initialized", None)
        if callable(is_initialized) and is_initialized():
            found.append(name)
    return tuple(found)


def _unforkable_reason() -> str | None:
    """Why workers forked from this server would be broken, or None."""
    torch_module = sys.modules.get("torch")
    runtimes = initialized_device_runtimes(torch_module) if torch_module else ()
    if not runtimes:
        return None
    return (f"the {', '.join(runtimes)} runtime was initialized while the tiers' modules were "
            "preloaded; a forked worker could not use it, so workers start cold")


def serve(server: socket.socket) -> None:
    """Answer each request with a worker's pid until the orchestrator closes the socket."""
    while True:
        data, fds, _flags, _address = socket.recv_fds(server, MAX_MESSAGE_BYTES, 3)
        if not data:
            return
        try:
            if len(fds) != 3:
                raise ValueError(f"a request carries 3 descriptors, not {len(fds)}")
            request = json.loads(data)
            reply: dict[str, Any] = {"pid": _fork_worker(server, list(request["argv"]), fds)}
        except Exception as exc:  # noqa: BLE001 - the orchestrator then starts one itself
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            for fd in fds:
                os.close(fd)
        server.send(json.dumps(reply).encode())


def _fork_worker(server: socket.socket, argv: list[str], fds: list[int]) -> int:
    """Fork twice; the grandchild becomes the worker and writes its pid once it leads its own
    session; returns that pid after the intermediate process has exited."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid_read, pid_write = os.pipe()
    intermediate = os.fork()
    if intermediate == 0:
        try:
            os.close(pid_read)
            if os.fork() == 0:
                _become_worker(server, argv, fds, pid_write)
        finally:
            os._exit(0)
    os.close(pid_write)
    with os.fdopen(pid_read, "rb") as told:
        text = told.read()
    os.waitpid(intermediate, 0)
    if not text.strip().isdigit():
        raise RuntimeError("the new worker did not report its pid")
    return int(text)


def _become_worker(
    server: socket.socket, argv: list[str], fds: list[int], pid_write: int
) -> NoReturn:
    """In the grandchild: what ``Popen(start_new_session=True, pass_fds=...)`` would have made,
    then the worker's ``main``; never returns."""
    code = 1
    try:
        intermediate = os.getppid()
        os.setsid()
        commands, results, log = fds
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        server.close()
        os.write(pid_write, str(os.getpid()).encode())
        _close_all_but((0, 1, 2, commands, results))
        _wait_until_orphaned(intermediate)
        random.seed()  # a cold start's seed: from the OS, not the server's state
        code = _run_worker([f"--commands={commands}", f"--results={results}", *argv])
    except BaseException:  # noqa: BLE001 - told in the log, as an interpreter would
        traceback.print_exc()
    end_process(code)


def _run_worker(args: list[str]) -> int:
    """The worker's module run as ``python -m`` runs it (as ``__main__``), with its arguments."""
    import runpy

    sys.argv = [WORKER_MODULE, *args]  # run_module puts the module's file first
    sys.orig_argv = [sys.executable, "-m", WORKER_MODULE, *args]
    try:
        runpy.run_module(WORKER_MODULE, run_name="__main__", alter_sys=True)
        return 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1


def _close_all_but(keep: tuple[int, ...]) -> None:
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass  # the listing's own descriptor, already closed


def _wait_until_orphaned(intermediate: int) -> None:
    """Until the intermediate process has gone and this one is the orchestrator's child: the
    worker's parent-death signal (``die_with_parent``) must follow the orchestrator."""
    deadline = time.monotonic() + _REPARENT_WAIT_S
    while os.getppid() == intermediate and time.monotonic() < deadline:
        time.sleep(0.001)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kit.runner.worker")
    parser.add_argument(SERVE_OPTION, type=int, required=True, dest="socket")
    parser.add_argument("--tiers", default="", help="the run's tiers, whose preloads to import")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    from kit.runner.heap import hold_collection, settle_heap
    from kit.runner.reaper import die_with_parent

    die_with_parent()  # a server outliving its run would be an orphan holding torch's memory
    hold_collection()
    server = socket.socket(fileno=args.socket)
    preload(tuple(name for name in args.tiers.split(",") if name))
    unforkable = _unforkable_reason()
    if unforkable:
        print(f"fork server: {unforkable}", file=sys.stderr, flush=True)
        server.send(json.dumps({"ready": False, "why": unforkable}).encode())
        return 0
    settle_heap()  # the heap the workers share, frozen: no collection copies its pages
    server.send(b'{"ready": true}')
    serve(server)
    return 0

