"""Plans: a shard is a deterministic part of the whole plan, and the parts partition it."""

from __future__ import annotations

import statistics

import pytest

from kit.errors import InputError
from kit.grading.policy import is_complete_run
from kit.report.model import RunScope
from kit.runner.plan import (
    BY_DURATIONS,
    BY_HASH,
    Durations,
    Shard,
    balanced_parts,
    hash_shard,
    make_plan,
    scope_tests,
)
from kit.standard import load_standard
from kit.tiers.registry import complete_run_tiers

TIERS = complete_run_tiers()


@pytest.fixture(scope="module")
def standard():
    return load_standard()


def test_hash_shards_partition_the_whole_plan(standard) -> None:
    whole = scope_tests(standard, TIERS, ())
    parts = [make_plan(standard, TIERS, (), Shard(k, 4)).tests for k in range(4)]
    assert sorted(t for part in parts for t in part) == whole  # each test once, none lost
    sizes = [len(part) for part in parts]
    assert max(sizes) / statistics.mean(sizes) < 1.1  # a stable hash spreads evenly
    assert all(p.balance == BY_HASH for p in (make_plan(standard, TIERS, (), Shard(0, 4)),))


def test_a_test_keeps_its_shard_whatever_else_is_planned(standard) -> None:
    # Membership depends on the id alone, so --select never moves a test to another shard.
    narrowed = make_plan(standard, ("unit",), ("unit/opinfo/add/*/*",), Shard(1, 3)).tests
    assert narrowed and all(hash_shard(t, 3) == 1 for t in narrowed)
    whole = make_plan(standard, TIERS, (), Shard(1, 3)).tests
    assert set(narrowed) <= set(whole)


def test_durations_balance_the_recorded_time() -> None:
    tests = [f"unit/opinfo/op{i}/float32/0" for i in range(40)]
    seconds = {t: float(i + 1) for i, t in enumerate(tests)}  # 1..40 s
    parts = balanced_parts(tests, seconds, 4)
    loads = [sum(seconds[t] for t in part) for part in parts]
    assert sorted(t for part in parts for t in part) == sorted(tests)
    assert max(loads) - min(loads) <= 1.0  # 820 s split 205/205/205/205 or within a second
    assert balanced_parts(tests, seconds, 4) == parts  # the same on every shard


def test_an_untimed_test_counts_as_the_median_timed_one() -> None:
    tests = ["a/0", "a/1", "a/2", "new/0"]
    parts = balanced_parts(tests, {"a/0": 10.0, "a/1": 1.0, "a/2": 1.0}, 2)
    assert parts == [["a/0"], ["a/1", "a/2", "new/0"]]


def test_a_durations_plan_records_its_source(standard) -> None:
    durations = Durations(seconds={}, report_sha256="ab" * 32)
    plan = make_plan(standard, ("unit",), ("unit/opinfo/add/*/*",), Shard(0, 2), durations)
    shard = plan.shard_json()
    assert shard is not None
    assert (shard["balance"], shard["durations_sha256"]) == (BY_DURATIONS, "ab" * 32)
    assert shard["tests"] == list(plan.tests)


@pytest.mark.parametrize(
    ("text", "words"),
    [("4/4", "K must be below N"), ("1/0", "expected K/N"), ("-1/4", "expected K/N"),
     ("1 of 4", "expected K/N"), ("01/4", "expected K/N"), ("", "expected K/N")],
)
def test_a_malformed_shard_is_one_line(text: str, words: str) -> None:
    with pytest.raises(InputError, match=words):
        Shard.parse(text)


def test_complete_means_every_locked_test_has_a_record(standard) -> None:
    every = {t for tier in complete_run_tiers() for t in standard.test_ids(tier)}
    run = RunScope(("unit",), ("nothing",), shard_tests=frozenset(), shard_label="0/2")
    # The records decide, not the command line the run section tells of.
    assert is_complete_run(standard, run, every)
    assert not is_complete_run(standard, RunScope(tuple(TIERS), ()), every - {min(every)})
