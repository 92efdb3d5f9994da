"""``standard.yaml`` is read strictly, merged over its parents: an unknown key or a value of the
wrong type is one line naming the file that set it and the key path in that file, whether the
child or its parent set it, at the top level or nested."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kit.errors import InputError
from kit.standard import load_standard
from kit.standard.catalogue import standard_directory

V2 = """\
version: v2
extends: v1
tolerances:
  float32: {atol: 2.0e-5}
grades:
  - name: conformant-with-exceptions
    min_pass_rate: 0.9
"""
TOP_KEYS = ("version, torch_release, released, tolerances, numerics, timeouts, skip_policy, "
            "required, grades, extends, tiers, test_lists, report_format")


@pytest.fixture
def standards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A kit home's standards: a copy of v1 and a v2 extending it with two changes."""
    root = tmp_path / "home" / "standards"
    shutil.copytree(standard_directory("v1"), root / "v1")
    (root / "v2").mkdir()
    (root / "v2" / "standard.yaml").write_text(V2, encoding="utf-8")
    monkeypatch.setenv("CKIT_HOME", str(root.parent))
    return root


def refusal_of_v2() -> str:
    with pytest.raises(InputError) as refused:
        load_standard("v2")
    message = str(refused.value)
    assert "\n" not in message
    return message


def edit(path: Path, old: str, new: str) -> Path:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ("extends: v1\n", "extends: v1\ntoleranses: {}\n",
         f"toleranses: unknown key; the keys here are {TOP_KEYS}"),
        ("{atol: 2.0e-5}", "{atol: 2.0e-5, rtool: 1}",
         "tolerances.float32.rtool: unknown key; the keys here are atol, rtol, normwise"),
        ("extends: v1\n", "extends: v1\ntorch_release: 2.14\n",
         'torch_release: expected a quoted release such as "2.13.0", got 2.14'),
        ("min_pass_rate: 0.9", "min_pass_rate: high",
         "grades.0 (conformant-with-exceptions).min_pass_rate: expected a number from 0 to 1, "
         "got 'high'"),
        ("{atol: 2.0e-5}", "{atol: -1}",
         "tolerances.float32.atol: expected a number >= 0, got -1"),
        ("extends: v1\n", "extends: v1\nreleased: ~\n", "released: missing; this key is required"),
    ],
    ids=["top-unknown", "nested-unknown", "top-type", "nested-type", "nested-bound",
         "null-removes-a-required-key"],
)
def test_a_childs_mistake_names_the_child(
    standards: Path, old: str, new: str, problem: str
) -> None:
    child = edit(standards / "v2" / "standard.yaml", old, new)
    assert refusal_of_v2() == f"{child}: {problem}"


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ("timeouts:", "bogus: 1\ntimeouts:", f"bogus: unknown key; the keys here are {TOP_KEYS}"),
        ("max_skip_days: 180", "max_skip_dayz: 180",
         "skip_policy.max_skip_dayz: unknown key; the keys here are never_skip, reasons, "
         "max_skip_days"),
        ("      ulps: 4\n    compound:", "      ulps: 4\n      ulpz: 4\n    compound:",
         "numerics.classes.elementwise.ulpz: unknown key; the keys here are about, exact, ulps, "
         "normwise, accumulation, accumulates, magnitude, centred"),
        ("released: 2026-11-01", 'released: "2026-11-01"',
         "released: expected a real date YYYY-MM-DD (unquoted), got '2026-11-01'"),
        ("rtol: 1.0e-4", "rtol: tiny",
         "tolerances.float32.rtol: expected a number >= 0, got 'tiny'"),
        ("    max_skipped_share: 1.0\n    certified_torch_release: true\n    real_clock: true",
         "    max_skipped_share: 1.0\n    certified_torch_release: true\n    real_clock: yes!",
         "grades.2 (non-conformant).real_clock: expected true or false (unquoted), got 'yes!'"),
        ("  unit: 60", "  unit: a minute",
         "timeouts.unit: expected a number of seconds >= 0, got 'a minute'"),
        ("  unit: [\"unit/*/*/float32/*\"]", "  unit: unit/*/*/float32/*",
         "required.unit: expected a list of text, got 'unit/*/*/float32/*'"),
    ],
    ids=["top-unknown", "nested-unknown", "numerics-unknown", "top-type", "inherited-beside-"
         "the-childs", "nested-type-of-a-grade", "timeout-type", "required-type"],
)
def test_a_parents_mistake_names_the_parent(
    standards: Path, old: str, new: str, problem: str
) -> None:
    parent = edit(standards / "v1" / "standard.yaml", old, new)
    assert refusal_of_v2() == f"{parent}: {problem}"


def test_a_value_the_child_sets_hides_the_parents_mistake(standards: Path) -> None:
    edit(standards / "v1" / "standard.yaml", "rtol: 1.0e-4", "rtol: tiny")
    edit(standards / "v2" / "standard.yaml", "{atol: 2.0e-5}", "{atol: 2.0e-5, rtol: 2.0e-4}")
    assert load_standard("v2").tolerance("float32").rtol == 2.0e-4


def test_a_grade_of_a_new_name_missing_a_field_names_the_child(standards: Path) -> None:
    child = edit(standards / "v2" / "standard.yaml", "    min_pass_rate: 0.9\n",
                 "    min_pass_rate: 0.9\n  - {name: withdrawn, exit_code: 12}\n")
    assert refusal_of_v2() == f"{child}: grades.1 (withdrawn).mark: missing; this key is required"


def test_the_top_of_a_parent_that_is_no_mapping_names_the_parent(standards: Path) -> None:
    parent = standards / "v1" / "standard.yaml"
    parent.write_text("- version: v1\n", encoding="utf-8")
    assert refusal_of_v2() == f"{parent}: expected a standard (a mapping of its fields), got a list"


def test_an_exit_code_two_grades_share_names_the_later_grade_in_its_file(standards: Path) -> None:
    edit(standards / "v2" / "standard.yaml", "min_pass_rate: 0.9",
         "min_pass_rate: 0.9\n    exit_code: 11")
    parent = standards / "v1" / "standard.yaml"
    assert refusal_of_v2() == (
        f"{parent}: grades.3 (not-certifiable).exit_code: 11 is already the exit_code of grade "
        "'conformant-with-exceptions'; each grade needs its own"
    )


def test_the_readme_table_of_standards_is_the_carried_standards() -> None:
    """standards/README.md's table names each carried standard, its release and its parent."""
    import re

    from kit import paths
    from kit.standard import load_standard
    from kit.standard.catalogue import carried_versions

    text = (paths.standards_dir() / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"(?m)^\| `(v\d+)` \| ([\d.]+) \| ?(?:`(v\d+)` )?\|", text)
    carried = [(v, load_standard(v).torch_release, load_standard(v).extends or "")
               for v in carried_versions()]
    assert rows == carried
