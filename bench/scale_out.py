"""Benchmark: scaling a run out (issue 11), measured in one run, printed as one table.

On the cpu vendor's unit tier (narrowed by ``--select``):
  - ``ckit run`` wall time with 1 and 2 workers;
  - 4 shards (``ckit run --shard K/4``; ``--shards N``) run at once as processes, then
    ``ckit merge``: wall time from the first shard's start to the merge's end, balanced by
    test-id hash and again by the 1-worker run's recorded durations (``--durations``); per
    balance, max/mean of the shards' wall times and test counts, and the merge alone;
  - verify throughput: N copies of a whole run's report (and of a narrowed one) built by the
    kit's own builder, each signed with a real key, checked by ``verify_envelope`` in this one
    process; plus one ``ckit verify`` subprocess for the start-up cost;
  - per-test cost of ``ckit run`` next to a fresh ``python -m pytest`` interpreter per test id.
The shard and merge commands are the engines' own (``kit.engines.interface.ShardedRun``), started
as ``python -m kit``. Usage:

    .venv/bin/python bench/scale_out.py [--select 'unit/opinfo/a*/*/*'] [--keep DIR]
        [--shards N] [--verify-reports N] [--isolation-sample N]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

# bench/ is this script's directory, hence on sys.path: the sibling benchmarks import as modules.
from isolation_overhead import kit_run
from verify_scale import time_verify

from kit.clock import RunDate
from kit.device import DeviceInfo
from kit.engines.interface import ShardedRun
from kit.errors import ExitCode, KitError
from kit.formats.files import write_report_files
from kit.grading import build_report, collect_environment
from kit.patterns import select_ids
from kit.results import Status, TestRecord
from kit.signing.keyring import add_public_key
from kit.signing.keys import generate_private_key, private_key_pem, write_private_key
from kit.signing.sign import sign_output_dir
from kit.standard import load_standard
from kit.tiers.registry import tier_names
from kit.vendors import SkipManifest, load_vendor
from kit.verification.verify import verify_envelope

VENDOR = "cpu"
#: Shards of the sharded runs by default (``--shards``): the engines' usual split.
SHARDS = 4
REPO_ROOT = Path(__file__).resolve().parent.parent
KIT = (sys.executable, "-m", "kit")


@dataclass(frozen=True)
class Timed:
    wall_s: float
    exit_code: int


@dataclass(frozen=True)
class ShardedTiming:
    balance: str
    #: First shard's start to the merge's end.
    wall_s: float
    shard_walls: tuple[float, ...]
    shard_tests: tuple[int, ...]
    merge_s: float


def timed(argv: Sequence[str]) -> Timed:
    started = time.perf_counter()
    done = subprocess.run(list(argv), capture_output=True, text=True, check=False, cwd=REPO_ROOT)
    wall = time.perf_counter() - started
    # A narrowed run grades non-conformant (1), or partial (12) when its tests all pass.
    if done.returncode not in (0, ExitCode.NOT_CONFORMANT, ExitCode.PARTIAL):
        tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SystemExit(f"scale_out: {' '.join(argv[3:6])} exited {done.returncode}: {tail}")
    return Timed(wall, done.returncode)


def on_kit(argv: Sequence[str]) -> list[str]:
    """An engine's command with this interpreter's ``python -m kit`` as the ``ckit`` it starts."""
    return [*KIT, *argv[1:]]


def unit_args(select: Sequence[str]) -> tuple[str, ...]:
    return ("--tier", "unit", *(arg for pattern in select for arg in ("--select", pattern)))


def whole_run(select: Sequence[str], workers: int, out: Path) -> float:
    argv = [*KIT, "run", "--vendor", VENDOR, *unit_args(select), "--workers", str(workers),
            "--no-sign", "--out", str(out)]
    return timed(argv).wall_s


def shard_tests(shard_dir: Path) -> int:
    report = json.loads((shard_dir / "report.json").read_text(encoding="utf-8"))
    return len(report["run"]["shard"]["tests"])


def shard_signing_key(root: Path) -> Path:
    """Shards sign with the vendor's key: one in a private config home (this process's and so
    its children's), its public key in a keyring the merge checks the shards with."""
    os.environ["XDG_CONFIG_HOME"] = str(root / "config")
    os.environ.pop("CKIT_SIGNING_KEY", None)
    keyring = root / "keyring"
    timed([*KIT, "keys", "generate", "--vendor", VENDOR, "--keyring", str(keyring),
           "--if-missing"])
    return keyring


def sharded_run(root: Path, select: Sequence[str], durations: Path | None,
                shards_count: int) -> ShardedTiming:
    balance = ("--durations", str(durations)) if durations else ()
    keyring = shard_signing_key(root.parent)
    run = ShardedRun(VENDOR, shards_count, str(root), (*unit_args(select), *balance), sign=False,
                     keyring=str(keyring))
    started = time.perf_counter()
    with ThreadPoolExecutor(shards_count) as pool:
        shards = list(pool.map(lambda k: timed(on_kit(run.shard_argv(str(k)))),
                               range(shards_count)))
    merge = timed(on_kit(run.merge_argv()))
    wall = time.perf_counter() - started
    counts = tuple(shard_tests(Path(run.shard_dir(str(k)))) for k in range(shards_count))
    return ShardedTiming("durations" if durations else "test-id hash", wall,
                         tuple(s.wall_s for s in shards), counts, merge.wall_s)


def imbalance(values: Sequence[float]) -> float:
    """max/mean: 1.00 is a perfect balance; the sharded run waits for its slowest shard."""
    mean = statistics.fmean(values)
    return max(values) / mean if mean else float("nan")


def report_of(select: str | None, finished: dt.datetime) -> dict[str, object]:
    """What the kit reports for a run in which every test passes: every locked test id of every
    tier (a whole certification run, ``select`` None) or only those matching ``select``."""
    standard = load_standard()
    ids = [t for tier in tier_names() for t in standard.test_ids(tier)]
    chosen = select_ids(ids, [select] if select else [])
    run = {"tiers": list(tier_names()), "select": [select] if select else [], "timeout_s": 60.0,
           "started_at": (finished - dt.timedelta(hours=1)).isoformat(),
           "finished_at": finished.isoformat(), "workers": 1, "complete": select is None}
    return build_report(records=[TestRecord(t, Status.PASS, 0.25) for t in chosen],
                        standard=standard, vendor=load_vendor(VENDOR),
                        skips=SkipManifest(entries=()),
                        environment=collect_environment(DeviceInfo("cpu", 1, "x86_64")),
                        run=run, clock=RunDate(finished.date()))


def signed_reports(root: Path, count: int, select: str | None) -> tuple[list[Path], Path]:
    """``count`` run directories holding one report each, signed by a real key; the keyring.

    The report is built once and copied: the kit's builder takes about a second for a whole run.
    """
    key = generate_private_key()
    key_path = root / "keys" / f"{VENDOR}.pem"
    write_private_key(key_path, private_key_pem(key, None), force=False)
    keyring = root / "keyring"
    add_public_key(keyring, VENDOR, key.public_key())
    finished = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(hours=1)
    first = root / "reports" / "00000"
    write_report_files(report_of(select, finished), first)
    envelopes = [sign_output_dir(first, key_path, None)]
    for index in range(1, count):
        run_dir = shutil.copytree(first, root / "reports" / f"{index:05d}")
        envelopes.append(sign_output_dir(run_dir, key_path, None))
    return envelopes, keyring


def verify_all(envelopes: Sequence[Path], keyring: Path) -> tuple[float, int]:
    """Seconds to verify every envelope in this process, and how many verified."""
    verified = 0
    started = time.perf_counter()
    for envelope in envelopes:
        try:
            verify_envelope(envelope, keyring_dir=keyring)
            verified += 1
        except KitError:
            pass  # counted: a throughput over refusals would mean nothing
    return time.perf_counter() - started, verified


def fresh_pytest_per_test(test_ids: Sequence[str]) -> tuple[float, int]:
    """Seconds to run each id alone in a fresh pytest interpreter, and how many passed."""
    passed = 0
    started = time.perf_counter()
    for test_id in test_ids:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "kit/tiers/unit", f"--ckit-vendor={VENDOR}",
             f"--ckit-select={test_id}", "-q", "-p", "no:cacheprovider"],
            capture_output=True, text=True, check=False, cwd=REPO_ROOT,
        )
        passed += done.returncode == 0 and " passed" in done.stdout
    return time.perf_counter() - started, passed


def sample(ids: Sequence[str], count: int) -> list[str]:
    """``count`` ids spread evenly over ``ids`` (the same ones every time)."""
    step = max(1, len(ids) // max(1, count))
    return list(ids[::step][:count])


def unit_ids(select: Sequence[str]) -> list[str]:
    ids = load_standard().test_ids("unit")
    return select_ids(ids, select)


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


Row = tuple[str, str]


def scaling_rows(root: Path, select: Sequence[str], ids: Sequence[str],
                 shards_count: int) -> list[Row]:
    one = root / "workers-1"
    one_s = whole_run(select, 1, one)
    two_s = whole_run(select, 2, root / "workers-2")
    by_hash = sharded_run(root / "hash", select, None, shards_count)
    by_durations = sharded_run(root / "durations", select, one, shards_count)
    rows = [("unit tests run", f"{len(ids)}"),
            ("ckit run, 1 worker", f"{one_s:.1f} s"),
            ("ckit run, 2 workers", f"{two_s:.1f} s ({one_s / two_s:.2f}x)")]
    for sharded in (by_hash, by_durations):
        rows += shard_rows(sharded, one_s)
    return rows


def shard_rows(sharded: ShardedTiming, one_s: float) -> list[Row]:
    name = f"{len(sharded.shard_walls)} shards by {sharded.balance}"
    walls = ", ".join(f"{w:.1f}" for w in sharded.shard_walls)
    counts = ", ".join(str(c) for c in sharded.shard_tests)
    return [
        (f"{name} + merge, wall", f"{sharded.wall_s:.1f} s ({one_s / sharded.wall_s:.2f}x)"),
        ("  shard wall times (s)", f"{walls}; max/mean {imbalance(sharded.shard_walls):.2f}"),
        ("  shard test counts", f"{counts}; max/mean {imbalance(sharded.shard_tests):.2f}"),
        ("  ckit merge alone", f"{sharded.merge_s:.2f} s"),
    ]


#: The narrowed report's selection: one op, as a quick check of a single op would report.
NARROW = "unit/opinfo/add/float32/*"


def verify_rows(root: Path, count: int) -> list[Row]:
    rows = []
    for name, select in (("whole run", None), ("narrowed", NARROW)):
        envelopes, keyring = signed_reports(root / "verify" / name.replace(" ", "-"), count, select)
        seconds, verified = verify_all(envelopes, keyring)
        size = envelopes[0].parent.joinpath("report.json").stat().st_size
        rows.append((f"verify_envelope, {name} report", f"{count / seconds:.1f} reports/s "
                     f"({verified}/{count} verified in one process, report.json "
                     f"{size / 2**10:.0f} KiB; goal >= 100/s)"))
    one = time_verify(envelopes[0], keyring, 1, "report")
    rows.append(("ckit verify, one subprocess", f"{one.wall_s:.2f} s ({name} report, "
                 f"exit {one.exit_code}, start-up included)"))
    return rows


def isolation_rows(ids: Sequence[str], count: int) -> list[Row]:
    chosen = sample(ids, count)
    kit_wall, _, journaled = kit_run(VENDOR, chosen)
    fresh_wall, passed = fresh_pytest_per_test(chosen)
    return [
        ("isolation sample", f"{len(chosen)} ids (kit journaled {journaled}, "
         f"fresh pytest passed {passed})"),
        ("ckit run, per test", f"{kit_wall / len(chosen):.2f} s ({kit_wall:.1f} s in all)"),
        ("fresh pytest per test", f"{fresh_wall / len(chosen):.2f} s ({fresh_wall:.1f} s in all)"),
    ]


def print_table(rows: Sequence[Row]) -> None:
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


def measure(root: Path, args: argparse.Namespace) -> list[Row]:
    ids = unit_ids(args.select)
    if not ids:
        raise SystemExit(f"scale_out: no unit test matches {args.select}")
    steps: list[Callable[[], list[Row]]] = [
        lambda: scaling_rows(root, args.select, ids, args.shards),
        lambda: verify_rows(root, args.verify_reports),
        lambda: isolation_rows(ids, args.isolation_sample),
    ]
    rows: list[Row] = [("load average at start", load_average())]
    for step in steps:
        rows += step()
    rows.append(("load average at end", load_average()))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--select", action="append", default=[], metavar="PATTERN",
                        help="narrow the unit tier to the ids matching PATTERN (repeatable)")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="write the runs and reports here and keep them")
    parser.add_argument("--shards", type=int, default=SHARDS, metavar="N",
                        help="shards of each sharded run (each a ckit run of its own)")
    parser.add_argument("--verify-reports", type=int, default=50, metavar="N")
    parser.add_argument("--isolation-sample", type=int, default=20, metavar="N")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ckit-scale-out-") as temp:
        root = args.keep or Path(temp)
        root.mkdir(parents=True, exist_ok=True)
        rows = measure(root.resolve(), args)
    print_table(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
