"""The distributed tier through the real CLI: one ``ckit run`` each of cpu (gloo) and simnpu (its
own process-group backend), narrowed to a few ids, simnpu's with planted faults: a rank whose
contribution is dropped, a reduce op applied wrong, a rank that aborts, one that hangs before
its collective and one that stalls inside it (half its buffers exchanged, its peer waiting in
gloo for the rest: in an all_reduce, an all_gather and a ring of sends).

simnpu's run is given ``--timeout 8``, far shorter than the standard's limit for the tier: the
ranks' deadlines come from the run's limit, not the standard's, so the hung rank is named within
seconds (its peers give up at 35% of the limit, the rank is killed at 75%) before the run's
limit would kill the worker and name no rank.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from kit_homes import kit_home_with_limits

from kit.context import KitContext
from kit.outcomes import verdict_of
from kit.results import Status
from kit.standard import load_standard
from kit.tiers.distributed.cases import run_distributed_case
from kit.tiers.distributed.ranks import RANKS_SHARE
from kit.tiers.registry import kit_inapplicable
from kit.vendors import SkipManifest, load_vendor

REPOSITORY = Path(__file__).resolve().parents[3]
#: simnpu's run's ``--timeout`` (seconds), shorter than the standard's limit for the tier.
LIMIT_S = 8
#: What cpu runs: a reduction, non-contiguous inputs, and the DDP step.
ON_CPU = (
    "distributed/all_reduce-sum/float32/small/2",
    "distributed/all_gather/float32/strided/2",
    "distributed/ddp-linear/float32/step/2",
)
#: What simnpu runs without a fault firing: a reduction, and a ring of sends over 4 ranks.
ON_SIMNPU = ("distributed/all_reduce-sum/float32/small/2", "distributed/send_recv/float32/small/4")
DROPPED = "distributed/all_reduce-sum/int64/small/2"
WRONG_OP = "distributed/reduce_scatter-sum/float32/small/2"
ABORTS = "distributed/all_to_all/float32/small/2"
HANGS = "distributed/broadcast/bfloat16/small/2"
#: A rank stalling inside each kind of exchange simnpu's process group makes: a collective on
#: one tensor, one on lists of them, a point-to-point ring.
STALLS = ("distributed/all_reduce-min/float16/small/2", "distributed/all_gather/bfloat16/small/2",
          "distributed/send_recv/int64/small/2")
FAULTS = [
    {"op": "c10d::allreduce", "kind": "drop_rank", "dtype": "int64"},
    {"op": "c10d::reduce_scatter", "kind": "wrong_reduce"},
    {"op": "c10d::alltoall", "kind": "abort"},
    {"op": "c10d::broadcast", "kind": "hang", "dtype": "bfloat16"},
    {"op": "c10d::allreduce", "kind": "stall", "dtype": "float16"},
    {"op": "c10d::allgather", "kind": "stall", "dtype": "bfloat16"},
    {"op": "c10d::send", "kind": "stall", "dtype": "int64"},
]


@pytest.fixture(scope="module")
def kit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout's standards, their limits as they are."""
    home = kit_home_with_limits(tmp_path_factory.mktemp("distributed-home"))
    assert load_standard().timeouts["distributed"] > 2 * LIMIT_S  # the run's --timeout rules
    return home


def _run(home: Path, vendor: str, ids: tuple[str, ...], *options: str, **env: str
         ) -> dict[str, dict[str, Any]]:
    tiers = ",".join(sorted({test_id.partition("/")[0] for test_id in ids}))
    out = home / f"out-{vendor}"
    selects = [arg for test_id in ids for arg in ("--select", test_id)]
    environment = {**os.environ, "CKIT_HOME": str(home),
                   "CKIT_VENDORS_DIR": str(REPOSITORY / "vendors"), **env}
    result = subprocess.run(
        [sys.executable, "-m", "kit", "run", "--vendor", vendor, "--tier", tiers,
         *selects, *options, "--no-sign", "--out", str(out)],
        env=environment, capture_output=True, text=True, timeout=600, check=False)
    assert (out / "report.json").exists(), result.stderr[-3000:]
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return {record["id"]: record for record in report["records"]}


@pytest.fixture(scope="module")
def cpu_records(kit_home: Path) -> dict[str, dict[str, Any]]:
    return _run(kit_home, "cpu", ON_CPU)


@pytest.fixture(scope="module")
def simnpu_records(kit_home: Path) -> dict[str, dict[str, Any]]:
    return _run(kit_home, "simnpu",
                (*ON_SIMNPU, DROPPED, WRONG_OP, ABORTS, HANGS, *STALLS),
                "--timeout", str(LIMIT_S), SIMNPU_FAULTS=json.dumps(FAULTS))


def test_gloo_on_the_cpu_passes_its_own_reference(cpu_records: dict[str, Any]) -> None:
    assert {test_id: r["status"] for test_id, r in cpu_records.items()} == dict.fromkeys(
        ON_CPU, "PASS")
    assert cpu_records[ON_CPU[0]]["details"]["ranks"] == 2


def test_simnpu_backend_passes_every_collective_it_does_not_break(
        simnpu_records: dict[str, Any]) -> None:
    assert [simnpu_records[test_id]["status"] for test_id in ON_SIMNPU] == ["PASS", "PASS"]


def test_a_dropped_rank_and_a_wrong_reduce_op_fail_numerically(
        simnpu_records: dict[str, Any]) -> None:
    dropped, wrong = simnpu_records[DROPPED], simnpu_records[WRONG_OP]
    assert (dropped["status"], wrong["status"]) == ("FAIL_NUMERIC", "FAIL_NUMERIC")
    assert dropped["details"]["where"].startswith("rank ")
    assert dropped["details"]["mismatched"] > 0


def test_a_rank_that_aborts_is_a_crash_naming_it(simnpu_records: dict[str, Any]) -> None:
    record = simnpu_records[ABORTS]
    assert (record["status"], record["details"]["rank"]) == ("CRASH", 1)
    assert "rank 1 of 2 died (SIGABRT)" in record["message"]


def test_a_rank_that_hangs_is_a_timeout_naming_it_within_the_limit(
        simnpu_records: dict[str, Any]) -> None:
    record = simnpu_records[HANGS]
    assert (record["status"], record["details"]["hung_ranks"]) == ("TIMEOUT", [1])
    assert "rank 1 of 2 still running" in record["message"]
    assert record["duration_s"] < LIMIT_S


@pytest.mark.parametrize("stalled", STALLS)
def test_a_rank_stalling_inside_the_collective_is_a_timeout_naming_it_as_its_peer_gives_up(
        simnpu_records: dict[str, Any], stalled: str) -> None:
    record = simnpu_records[stalled]
    assert (record["status"], record["details"]["hung_ranks"]) == ("TIMEOUT", [1])
    assert "rank 1 of 2 still running" in record["message"]
    # its peer got the first half, then waited in gloo for the second until the group's timeout
    assert list(record["details"]["rank_errors"]) == ["0"]
    assert record["duration_s"] < LIMIT_S
    # how long the ranks were waited for: cut short by the peer's error, not the whole limit
    waited = float(record["message"].split(" still running after ")[1].split(" s;")[0])
    assert waited <= record["duration_s"] < LIMIT_S * RANKS_SHARE


def test_every_record_says_where_its_collectives_ran(
        cpu_records: dict[str, Any], simnpu_records: dict[str, Any]) -> None:
    # the profile's process_group_transport, on passing, failing, crashed and hung records alike
    assert {r["details"]["transport"] for r in cpu_records.values()} == {"native"}
    assert {r["details"]["transport"] for r in simnpu_records.values()} == {"host-copy"}
    # and how their ranks started: forked from the worker, where the device survives a fork
    # (test_rank_start.py: a device that does not)
    records = (*cpu_records.values(), *simnpu_records.values())
    assert {r["details"]["rank_start"] for r in records} == {"fork"}


def test_show_and_summary_count_host_copy_collectives_as_not_native(
        kit_home: Path, simnpu_records: dict[str, Any]) -> None:
    from kit.report.read import read_report
    from kit.views.show import show_lines, show_view

    out = kit_home / "out-simnpu"
    ran = len(simnpu_records)
    words = (f"0 distributed test(s) ran natively on the device; {ran} ran on host copies of "
             "the device tensors, not natively")
    view = show_view(read_report(out), limit=5)
    assert [line for line in show_lines(view, limit=5) if line.startswith("collectives")] == [
        f"collectives (as the vendor's profile declares): {words}"]
    assert view.to_json()["collectives"] == {"declared_by": "vendor profile", "native": 0,
                                             "host_copy": ran}
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert f"## What ran on the device\n\nCollectives (as the vendor's profile declares): " \
           f"{words}.\n" in summary


def test_a_vendor_claiming_no_backend_is_not_applicable_by_the_kit() -> None:
    decision = kit_inapplicable(load_standard(), load_vendor("cppnpu"), ON_CPU[0])
    assert decision is not None and decision.reason.value == "unclaimed-process-group"


def test_a_claimed_backend_that_does_not_exist_is_one_line_error() -> None:
    vendor = dataclasses.replace(load_vendor("cpu"), process_group_backend="nosuchccl")
    ckit = KitContext(load_standard(), vendor, SkipManifest(entries=()), None, dt.date.today())
    try:
        run_distributed_case(ckit, ON_CPU[0])
    except Exception as exc:  # noqa: BLE001 - the verdict is what is tested
        verdict = verdict_of(exc)
    else:
        pytest.fail("a backend that does not exist ran")
    assert verdict.status is Status.ERROR
    assert verdict.message.startswith("RankRaised: rank 0: ") and "nosuchccl" in verdict.message
    assert "\n" not in verdict.message
