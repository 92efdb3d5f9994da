"""A standard that extends another carries only what changes: a kit home with a copy of v1 and
a v2 that ``extends: v1``, changing one tolerance and one grade field and nothing else."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from kit.cli import main
from kit.errors import InputError
from kit.standard import Standard, Tolerance, load_standard
from kit.standard.catalogue import carried_versions, current_version, standard_directory
from kit.tiers.unit.config import load_unit_config
from kit.tiers.unit.opspecs import load_op_specs, opspec_test_ids

V2 = """\
# v1 with a looser float32 atol and a lower bar for conformant-with-exceptions.
version: v2
extends: v1
tolerances:
  float32: {atol: 2.0e-5}
grades:
  - name: conformant-with-exceptions
    min_pass_rate: 0.9
"""
#: Files a standard names besides standard.yaml; v2 carries none of them.
NAMED_FILES = ("unit.yaml", "models.yaml", "flows.yaml", "NUMERICS.md", "report.schema.json",
               "acceptance.yaml", "gate.yaml", "tests/unit.txt", "ops/broadcasting.yaml")


@pytest.fixture
def standards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The standards root of a kit home holding a copy of v1 and the v2 above."""
    root = tmp_path / "home" / "standards"
    shutil.copytree(standard_directory("v1"), root / "v1")
    write_standard(root, "v2", V2)
    monkeypatch.setenv("CKIT_HOME", str(root.parent))
    return root


def write_standard(root: Path, directory: str, text: str) -> Path:
    (root / directory).mkdir(parents=True, exist_ok=True)
    path = root / directory / "standard.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def refusal(version: str) -> str:
    with pytest.raises(InputError) as refused:
        load_standard(version)
    message = str(refused.value)
    assert "\n" not in message
    return message


def test_the_child_has_its_parents_values_with_its_two_changes(standards: Path) -> None:
    v1, v2 = load_standard("v1"), load_standard("v2")
    assert v2.version == "v2" and v2.extends == "v1"
    assert v2.tolerance("float32") == Tolerance(atol=2.0e-5, rtol=v1.tolerance("float32").rtol)
    changed = v2.grade("conformant-with-exceptions")
    assert changed.min_pass_rate == 0.9
    assert changed == dataclasses.replace(v1.grade("conformant-with-exceptions"),
                                          min_pass_rate=0.9)
    as_v1 = dataclasses.replace(
        v2, version="v1", directory=v1.directory, inherited=(), tolerances=v1.tolerances,
        grades=tuple(changed if g.name == changed.name else g for g in v1.grades),
    )
    assert dataclasses.replace(as_v1, grades=v1.grades) == v1
    assert v2.torch_release == v1.torch_release and v2.released == v1.released


def test_the_child_finds_every_file_it_does_not_carry_in_its_parent(standards: Path) -> None:
    v2 = load_standard("v2")
    assert v2.directories == (standards / "v2", standards / "v1")
    for name in NAMED_FILES:
        assert v2.file(name) == standards / "v1" / name
    assert v2.tier_file("unit") == standards / "v1" / "unit.yaml"
    (standards / "v2" / "gate.yaml").write_text("# v2's own gate\n", encoding="utf-8")
    assert v2.file("gate.yaml") == standards / "v2" / "gate.yaml"


def test_the_childs_locked_lists_are_its_parents(standards: Path) -> None:
    v1, v2 = load_standard("v1"), load_standard("v2")
    for tier in v1.test_lists:
        assert v2.test_list_path(tier) == v1.test_list_path(tier)
        assert v2.test_ids(tier) == v1.test_ids(tier)
    assert v2.own_test_list_path("unit") == standards / "v2" / "tests" / "unit.txt"


def test_op_specs_are_looked_up_file_by_file_child_first(standards: Path) -> None:
    v2 = load_standard("v2")
    config = load_unit_config(v2)
    assert config.op_specs_dirs == (standards / "v2" / "ops", standards / "v1" / "ops")
    assert opspec_test_ids(config) == opspec_test_ids(load_unit_config(load_standard("v1")))
    own = standards / "v2" / "ops" / "broadcasting.yaml"
    own.parent.mkdir()
    shutil.copyfile(standards / "v1" / "ops" / "broadcasting.yaml", own)
    sources = {t.source for t in load_op_specs(*config.op_specs_dirs).values()}
    assert own in sources and standards / "v1" / "ops" / "broadcasting.yaml" not in sources


def test_a_null_removes_a_key_and_a_grade_of_a_new_name_comes_last(standards: Path) -> None:
    write_standard(standards, "v2", V2.replace("  float32: {atol: 2.0e-5}", "  float32: ~")
                   + "  - {name: withdrawn, exit_code: 13, mark: W, min_pass_rate: 0.0,\n"
                     "     all_required_passed: false, max_policy_violations: -1,\n"
                     "     max_skipped_share: 1.0, certified_torch_release: false,\n"
                     "     real_clock: false}\n")
    v2 = load_standard("v2")
    assert "float32" not in v2.tolerances
    assert [g.name for g in v2.grades] == [*(g.name for g in load_standard("v1").grades),
                                           "withdrawn"]


def test_the_newest_standard_of_the_installed_release_is_current(standards: Path) -> None:
    assert carried_versions() == ("v1", "v2")
    assert current_version("2.13.0+cpu") == "v2"
    write_standard(standards, "v2", V2 + 'torch_release: "2.14.0"\n')
    assert load_standard("v2").torch_release == "2.14.0"
    assert current_version("2.13.0+cpu") == "v1"
    assert current_version("2.14.0+cu130") == "v2"
    assert current_version("2.99.0") == "v2"  # no standard certifies it: the newest


def test_standard_show_names_the_current_standard_and_its_parent(
    standards: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["standard", "show", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["version"], shown["extends"]) == ("v2", "v1")
    assert shown["tests"] == {tier: len(load_standard("v1").test_ids(tier))
                              for tier in load_standard("v1").test_lists}


def test_lock_writes_the_childs_lists_into_its_own_directory(
    standards: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inherited = (standards / "v1" / "tests" / "deploy.txt").read_text(encoding="utf-8")
    assert main(["standard", "lock", "--tier", "deploy", "--check"]) == 0
    assert main(["standard", "lock", "--tier", "deploy"]) == 0
    own = standards / "v2" / "tests" / "deploy.txt"
    assert str(own) in capsys.readouterr().out
    assert own.read_text(encoding="utf-8") == inherited
    assert (standards / "v1" / "tests" / "deploy.txt").read_text(encoding="utf-8") == inherited
    assert load_standard("v2").test_list_path("deploy") == own


def test_extending_an_unknown_standard_is_refused(standards: Path) -> None:
    source = write_standard(standards, "v2", V2.replace("extends: v1", "extends: v9"))
    assert refusal("v2") == (
        f"{source}: extends unknown standard 'v9' (the standards beside it: v1, v2)"
    )


def test_extending_a_path_instead_of_a_version_is_refused(standards: Path) -> None:
    source = write_standard(standards, "v2", V2.replace("extends: v1", "extends: ../v1"))
    assert refusal("v2").startswith(f"{source}: extends: expected a standard's version")


def test_a_cycle_of_standards_is_refused(standards: Path) -> None:
    write_standard(standards, "v3", V2.replace("version: v2", "version: v3")
                   .replace("extends: v1", "extends: v2"))
    source = write_standard(standards, "v2", V2.replace("extends: v1", "extends: v3"))
    message = refusal("v3")
    assert message == f"{source}: extends 'v3', a cycle: v3 -> v2 -> v3"


def test_a_standard_extending_itself_is_a_cycle(standards: Path) -> None:
    source = write_standard(standards, "v2", V2.replace("extends: v1", "extends: v2"))
    assert refusal("v2") == f"{source}: extends 'v2', a cycle: v2 -> v2"


def test_a_version_that_differs_from_its_directory_name_is_refused(standards: Path) -> None:
    source = write_standard(standards, "v2", V2.replace("version: v2", "version: v3"))
    assert refusal("v2") == f"{source}: version 'v3' differs from its directory's name 'v2'"


def test_a_child_that_states_no_version_is_refused_not_given_its_parents(
    standards: Path,
) -> None:
    source = write_standard(standards, "v2", V2.replace("version: v2\n", ""))
    assert refusal("v2") == f"{source}: version: missing; this key is required"


def test_a_parent_whose_version_differs_from_its_directory_is_refused(standards: Path) -> None:
    parent = standards / "v1" / "standard.yaml"
    parent.write_text(parent.read_text().replace("version: v1", "version: v7"))
    assert refusal("v2") == f"{parent}: version 'v7' differs from its directory's name 'v1'"


def test_a_standard_the_kit_does_not_carry_is_refused_naming_the_carried_ones(
    standards: Path,
) -> None:
    assert refusal("v9") == (
        f"standard 'v9' is not carried by this kit (it carries v1, v2, in {standards})"
    )


def test_the_checkout_carries_its_standards_and_each_loads() -> None:
    carried = carried_versions()
    assert carried and carried == tuple(sorted(carried, key=lambda v: int(v[1:])))
    loaded = [load_standard(version) for version in carried]
    assert all(isinstance(s, Standard) and s.version == v for s, v in zip(loaded, carried,
                                                                         strict=True))
