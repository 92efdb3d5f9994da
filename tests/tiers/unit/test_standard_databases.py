"""``ckit standard show``'s table of PyTorch's test databases against the standard's locked
unit list (``kit.tiers.unit.databases``), counted from the installed release's own databases."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from kit.attribution import op_names
from kit.attribution.op_names import release_core_ops
from kit.cli import main
from kit.standard import load_standard
from kit.tiers.unit.config import sweep_exclusions
from kit.tiers.unit.databases import (
    CPU_REFUSES,
    EXCLUDED,
    NOT_BUILT,
    NOT_JUDGED,
    Entry,
    database_rows,
    installed_entries,
)
from kit.tiers.unit.optim_ids import UNJUDGED
from kit.tiers.unit.unit_id import OPINFO_SOURCE, SWEEP_SOURCE, UnitId


def test_show_counts_the_release_databases_against_the_locked_unit_list(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["standard", "show", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["databases"]
    standard = load_standard()
    listed = installed_entries()
    assert listed is not None and shown["release"] == listed[0] == standard.torch_release
    op_db, module_db, optim_db = shown["databases"]
    if standard.torch_release == "2.13.0":  # the release's own sizes, as PyTorch ships them
        assert (op_db["shipped"], op_db["names"], module_db["shipped"],
                optim_db["shipped"]) == (702, 636, 114, 15)
    unit_ids = standard.test_ids("unit")
    locked_ops = {unit.op for t in unit_ids
                  if (unit := UnitId.of(t)).source in (OPINFO_SOURCE, SWEEP_SOURCE)}
    op_keys = {entry.key for entry in listed[1] if entry.database == "op_db"}
    assert op_db["run"] == len(locked_ops & op_keys) > 600  # the unit list and the sweep
    assert op_db["run"] + sum(op_db["not_run"].values()) == op_db["shipped"]
    # Each OpInfo the sweep excludes is counted under its reason, none silently absent.
    excluded = sweep_exclusions(standard)
    assert excluded is not None
    for reason, count in Counter(excluded[key] for key in op_keys if key in excluded).items():
        assert op_db["not_run"][f"{EXCLUDED}: {reason}"] == count
    # Every ModuleInfo has locked tests: run, or NOT_APPLICABLE where CPU refuses them all.
    locked_modules = {unit.op for t in unit_ids if (unit := UnitId.of(t)).source == "module"}
    assert len(locked_modules) == module_db["shipped"]
    assert module_db["run"] + module_db["not_run"].get(CPU_REFUSES, 0) == module_db["shipped"]
    assert sum(shown["unit_tests"].values()) == len(unit_ids)
    core = release_core_ops(standard.torch_release)
    assert core is not None and shown["core_aten_ops"] == len(core)
    assert main(["standard", "show"]) == 0
    out = capsys.readouterr().out.splitlines()
    # Every OptimizerInfo has locked tests; those the kit cannot judge are counted by reason.
    locked_optimizers = {unit.op for t in unit_ids if (unit := UnitId.of(t)).source == "optim"}
    assert len(locked_optimizers) == optim_db["shipped"]
    assert optim_db["not_run"] == {f"{NOT_JUDGED}: {u.label}": 1 for u in UNJUDGED.values()}
    assert optim_db["run"] == optim_db["shipped"] - len(UNJUDGED)
    why = "; ".join(f"{reason}: {n}" for reason, n in optim_db["not_run"].items())
    assert (f"  OptimizerInfos (optim_db): {optim_db['shipped']} shipped, {optim_db['run']} run, "
            f"{len(UNJUDGED)} not run ({why})") in out
    tests = shown["unit_tests"]
    assert {"opinfo", "sweep", "opspec", "optim", "module"} == set(tests)
    per_source = ", ".join(f"{n} {source}" for source, n in tests.items())
    assert f"unit tests: {len(unit_ids)} in total ({per_source})" in out


def test_an_entry_whose_every_locked_test_cpu_refuses_is_counted_not_run_by_that_reason(
) -> None:
    entries = [Entry("module_db", name, "", frozenset()) for name in ("nn.Ran", "nn.Refused")]
    locked = ["unit/module/nn.Ran/float32/train-0", "unit/module/nn.Refused/float32/train-0"]
    rows = {row.database.name: row for row in database_rows(entries, locked, locked[1:])}
    assert (rows["module_db"].run, rows["module_db"].not_run) == (1, {CPU_REFUSES: 1})


def test_a_sweep_counts_an_opinfo_without_a_test_as_not_built_and_an_excluded_one_by_reason(
) -> None:
    entries = [Entry("op_db", name, "", frozenset({"float32"})) for name in ("ran", "out", "odd")]
    locked = ["unit/sweep/ran/float32/0"]
    rows = {row.database.name: row for row in database_rows(
        entries, locked, (), {"out": "complex result"})}
    assert (rows["op_db"].run, rows["op_db"].not_run) == (
        1, {f"{EXCLUDED}: complex result": 1, NOT_BUILT: 1})


def test_a_cache_file_of_another_format_lists_no_databases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = installed_entries()
    assert listed is not None
    release = op_names.installed_torch_version()
    cache = tmp_path / "ckit"
    cache.mkdir()
    (cache / f"test-databases-1-torch-{release}.txt").write_text(
        "op_db\tadd\n", encoding="utf-8")  # two fields where the program writes four
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    op_names.release_listing.cache_clear()
    try:
        assert installed_entries() is None
    finally:
        op_names.release_listing.cache_clear()
