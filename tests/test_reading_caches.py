"""What verification caches to go fast (parsed YAML, locked lists, compiled id patterns) never
changes what is read: a cached answer is the answer a fresh read would give."""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
from pathlib import Path

import pytest

from kit import hashing, paths
from kit.errors import InputError
from kit.grading.environment import installed_packages
from kit.hashing import kit_digest
from kit.patterns import matches, matches_any, select_ids
from kit.standard import load_standard
from kit.yamlio import load_yaml


def test_a_yaml_file_read_twice_gives_independent_copies(tmp_path: Path):
    path = tmp_path / "profile.yaml"
    path.write_text("id: acme\nflows: [eager]\n", encoding="utf-8")
    first = load_yaml(path)
    first["flows"].append("tampered")
    assert load_yaml(path) == {"id": "acme", "flows": ["eager"]}


def test_a_yaml_file_changed_between_reads_is_read_anew(tmp_path: Path):
    path = tmp_path / "profile.yaml"
    path.write_text("id: acme\n", encoding="utf-8")
    assert load_yaml(path) == {"id": "acme"}
    path.write_text("id: other\n", encoding="utf-8")
    assert load_yaml(path) == {"id": "other"}


def test_a_refused_yaml_is_refused_every_time(tmp_path: Path):
    path = tmp_path / "skips.yaml"
    path.write_text("skips: &loop [*loop]\n", encoding="utf-8")
    for _ in range(2):
        with pytest.raises(InputError, match="recursive"):
            load_yaml(path)


def test_a_locked_list_changed_between_reads_is_read_anew(tmp_path: Path):
    (tmp_path / "unit.txt").write_text("unit/a/float32/0\n# a comment\n", encoding="utf-8")
    standard = dataclasses.replace(load_standard(), directory=tmp_path,
                                   test_lists={"unit": "unit.txt"})
    ids = standard.test_ids("unit")
    ids.append("unit/smuggled/float32/0")
    assert standard.test_ids("unit") == ["unit/a/float32/0"]
    (tmp_path / "unit.txt").write_text("unit/b/float32/0 sha256:00\n", encoding="utf-8")
    assert standard.test_ids("unit") == ["unit/b/float32/0"]


@pytest.mark.parametrize(
    "patterns",
    [
        (),
        ("unit/opinfo/add/*/*",),
        ("unit/opinfo/add/*/*", "unit/opinfo/mul/float16/?"),
        ("unit/**",),
        ("unit/opinfo/*",),  # one segment only: matches no deeper id
    ],
)
def test_selecting_ids_at_once_matches_one_pattern_at_a_time(patterns):
    ids = load_standard().test_ids("unit")
    expected = [t for t in ids if any(matches(t, p) for p in patterns)] if patterns else ids
    assert select_ids(ids, patterns) == expected
    assert [t for t in ids if matches_any(t, patterns)] == (expected if patterns else [])


def test_a_standard_is_read_once_until_a_file_of_its_chain_changes(tmp_path: Path):
    """The loaded standard is kept while its chain's standard.yaml files hold the same bytes;
    a parent edited since is read anew, as is a child whose parent is edited back."""
    carried = load_standard("v2")
    v1 = tmp_path / "v1" / "standard.yaml"
    v1.parent.mkdir()
    v1.write_bytes((carried.inherited[0] / "standard.yaml").read_bytes())
    child = tmp_path / "v2"
    child.mkdir()
    (child / "standard.yaml").write_bytes((carried.directory / "standard.yaml").read_bytes())
    first = load_standard(directory=child)
    assert load_standard(directory=child) is first
    v1.write_text(v1.read_text(encoding="utf-8").replace("max_skip_days:",
                                                         "max_skip_days: 7 #"),
                  encoding="utf-8")
    edited = load_standard(directory=child)
    assert edited.max_skip_days == 7 != first.max_skip_days
    v1.write_text(v1.read_text(encoding="utf-8").replace("max_skip_days: 7 #",
                                                         "max_skip_days:"), encoding="utf-8")
    assert load_standard(directory=child) == first


def _same_size_edit(path: Path, old: str, new: str) -> None:
    """Rewrite ``path`` with ``old`` replaced by ``new`` (as long), dated as an edit of long ago
    would be: the cache may key on it (``kit.hashing.SETTLE_NS``)."""
    assert len(old) == len(new)
    stat = path.stat()
    path.write_text(path.read_text().replace(old, new, 1))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns - 10**9 * 3600))


def test_the_kit_digest_is_hashed_again_only_when_a_file_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(paths.standards_dir(), tmp_path / "standards")
    for path in (tmp_path / "standards").rglob("*"):  # copied long ago: old enough to key on
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns - 10**9 * 7200))
    monkeypatch.setenv("CKIT_HOME", str(tmp_path))
    hashed: list[Path] = []
    real_sha256_file = hashing.sha256_file
    monkeypatch.setattr(hashing, "sha256_file",
                        lambda path: hashed.append(path) or real_sha256_file(path))
    before = kit_digest()
    files = len(hashed)
    assert kit_digest() == before and len(hashed) == files  # nothing changed: not hashed again
    _same_size_edit(tmp_path / "standards" / "v1" / "standard.yaml", "1.0e-4", "1.1e-4")
    after = kit_digest()
    assert after != before and len(hashed) == 2 * files


def test_a_file_edited_just_now_is_never_keyed_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Written this second: a same-size rewrite within the clock's tick could keep its stat.
    shutil.copytree(paths.standards_dir(), tmp_path / "standards")
    monkeypatch.setenv("CKIT_HOME", str(tmp_path))
    standard = tmp_path / "standards" / "v1" / "standard.yaml"
    standard.write_text(standard.read_text())
    before = kit_digest()
    stat = standard.stat()
    standard.write_text(standard.read_text().replace("1.0e-4", "1.1e-4", 1))
    os.utime(standard, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the same stat as before
    assert kit_digest() != before


def test_a_distribution_installed_after_a_report_is_in_the_next_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    os.utime(site, ns=(0, time.time_ns() - 10**9 * 3600))  # old enough to key on
    before = installed_packages()
    assert installed_packages() == before
    info = site / "acme_npu-1.0.dist-info"
    info.mkdir()  # what pip does: the directory on sys.path changes
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-npu\nVersion: 1.0\n")
    assert installed_packages() == sorted([*before, "acme-npu==1.0"])
