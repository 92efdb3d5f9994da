"""The standard's skip policy on real manifests: expiry, lifetime, globs, stale and never-skip."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from vendors_helpers import skip_entry, skips_yaml, write_locked_standard, write_vendor

from kit.cli import main
from kit.errors import InputError
from kit.standard import load_standard
from kit.standard.catalogue import standard_directory
from kit.vendors import list_vendor_ids, load_skip_manifest, load_vendor
from kit.vendors.skip_limits import all_locked_ids, refuse_disallowed_entries

TODAY = dt.date(2026, 11, 22)
LOCKED_UNIT_IDS = [
    "unit/opinfo/add/float32/sample0",
    "unit/opinfo/add/bfloat16/sample0",
    "unit/opinfo/add/bfloat16/sample1",
    "unit/opinfo/nn.functional.conv2d/bfloat16/sample0",
    "unit/opspec/conv2d/bfloat16/nchw/sample0",
]


def _manifest(tmp_path: Path, *entries: str) -> Path:
    path = tmp_path / "skips.yaml"
    path.write_text(skips_yaml(*entries), encoding="utf-8")
    return path


def test_unexpired_entry_skips(tmp_path: Path) -> None:
    manifest = load_skip_manifest(
        _manifest(tmp_path, skip_entry("unit/opinfo/add/bfloat16/*", expires="2026-11-22"))
    )
    decision = manifest.decide("unit/opinfo/add/bfloat16/sample1", TODAY)
    assert decision.skip and not decision.expired
    assert decision.details["skip"]["expires"] == "2026-11-22"  # the last day still counts


def test_expired_entry_does_not_skip_and_is_reported_expired(tmp_path: Path) -> None:
    manifest = load_skip_manifest(
        _manifest(tmp_path, skip_entry("unit/opinfo/add/bfloat16/*", expires="2026-11-21"))
    )
    decision = manifest.decide("unit/opinfo/add/bfloat16/sample1", TODAY)
    assert not decision.skip and decision.expired
    assert decision.details["skip"]["expired"] is True
    assert [e.test for e in manifest.expired_entries(TODAY)] == ["unit/opinfo/add/bfloat16/*"]


def test_unquoted_yaml_date_reads_like_a_quoted_one(tmp_path: Path) -> None:
    unquoted = load_skip_manifest(_manifest(tmp_path, skip_entry("unit/**", expires="2027-01-31")))
    assert unquoted.entries[0].expires == dt.date(2027, 1, 31)


def test_single_star_stays_within_one_segment(tmp_path: Path) -> None:
    manifest = load_skip_manifest(_manifest(tmp_path, skip_entry("unit/opinfo/*/bfloat16/*")))
    assert manifest.decide("unit/opinfo/add/bfloat16/sample0", TODAY).skip
    # One segment deeper than the pattern: '*' must not swallow the '/'.
    assert not manifest.decide("unit/opspec/conv2d/bfloat16/nchw/sample0", TODAY).skip
    assert not manifest.decide("unit/opinfo/add/bfloat16/sample0/extra", TODAY).skip


def test_double_star_crosses_segments(tmp_path: Path) -> None:
    manifest = load_skip_manifest(_manifest(tmp_path, skip_entry("unit/opspec/**")))
    assert manifest.decide("unit/opspec/conv2d/bfloat16/nchw/sample0", TODAY).skip
    assert not manifest.decide("unit/opinfo/add/bfloat16/sample0", TODAY).skip


def test_first_matching_entry_wins(tmp_path: Path) -> None:
    manifest = load_skip_manifest(
        _manifest(
            tmp_path,
            skip_entry("unit/opinfo/add/bfloat16/sample0", expires="2020-01-01"),
            skip_entry("unit/opinfo/add/bfloat16/*"),
        )
    )
    # The expired exact entry shadows the broad one: the test is not skipped.
    assert manifest.decide("unit/opinfo/add/bfloat16/sample0", TODAY).expired
    assert manifest.decide("unit/opinfo/add/bfloat16/sample1", TODAY).skip


def test_stale_entries_match_no_test(tmp_path: Path) -> None:
    manifest = load_skip_manifest(
        _manifest(tmp_path, skip_entry("unit/opinfo/add/*/*"), skip_entry("unit/opinfo/gone/*/*"))
    )
    stale = manifest.stale_entries(LOCKED_UNIT_IDS)
    assert [e.test for e in stale] == ["unit/opinfo/gone/*/*"]


# --- through `ckit vendors validate` ----------------------------------------------------------


@pytest.fixture
def kit_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A kit home whose standard v1 has a locked unit list; vendors live in tmp_path/vendors."""
    source = standard_directory("v1") / "standard.yaml"  # a standard that extends none
    home = write_locked_standard(tmp_path / "home", source, LOCKED_UNIT_IDS)
    monkeypatch.setenv("CKIT_HOME", str(home))
    monkeypatch.setenv("CKIT_VENDORS_DIR", str(tmp_path / "vendors"))
    return home


def _validate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, list[str]]:
    code = main(["vendors", "validate", "--today", TODAY.isoformat(), *args])
    out, err = capsys.readouterr()
    return code, out, err.strip().splitlines()


def test_validate_refuses_stale_entry(
    kit_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    skips = skips_yaml(skip_entry("unit/opinfo/add/bfloat16/*"), skip_entry("unit/opinfo/gone/**"))
    directory = write_vendor(tmp_path / "vendors", skips=skips)
    code, out, errors = _validate(capsys)
    assert (code, out) == (3, "")
    assert errors == [
        f"ckit: error: {directory / 'skips.yaml'}: skips.1 ('unit/opinfo/gone/**'): matches no "
        "test of the standard's locked test lists (patterns are case-sensitive): fix the "
        "pattern or remove the entry"
    ]


def test_validate_warns_about_expired_entry(
    kit_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_vendor(
        tmp_path / "vendors",
        skips=skips_yaml(skip_entry("unit/opinfo/add/bfloat16/*", expires="2026-01-31")),
    )
    code, out, warnings = _validate(capsys)
    assert (code, out) == (0, "OK acme\n")
    assert len(warnings) == 1
    assert "skips.0" in warnings[0] and "expired on 2026-01-31" in warnings[0]


def test_skip_manifest_entry_for_never_skip_test_is_refused_by_validate(
    kit_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A glob over every dtype of add reaches add/float32, which the standard never lets skip.
    directory = write_vendor(
        tmp_path / "vendors", skips=skips_yaml(skip_entry("unit/opinfo/add/*/*"))
    )
    code, out, errors = _validate(capsys)
    assert (code, out) == (3, "")
    assert errors == [
        f"ckit: error: {directory / 'skips.yaml'}: skips.0 ('unit/opinfo/add/*/*'): matches "
        "never-skip test 'unit/opinfo/add/float32/sample0'; standard v1 never allows skipping "
        "it: narrow the pattern or remove the entry"
    ]


def test_narrowed_entry_beside_a_never_skip_test_validates(
    kit_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_vendor(tmp_path / "vendors", skips=skips_yaml(skip_entry("unit/opinfo/add/bfloat16/*")))
    code, out, warnings = _validate(capsys)
    assert (code, out, warnings) == (0, "OK acme\n", [])


@pytest.mark.parametrize("expires", ["9999-12-31", "2027-05-01"])
def test_expiry_beyond_max_lifetime_is_refused_by_validate(
    kit_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], expires: str
) -> None:
    # Standard v1 was released 2026-11-01 and allows 180 days: 2027-04-30 at the latest.
    skips = skips_yaml(
        skip_entry("unit/opinfo/add/bfloat16/*", expires="2027-04-30"),
        skip_entry("unit/opspec/**", expires=expires),
    )
    directory = write_vendor(tmp_path / "vendors", skips=skips)
    code, out, errors = _validate(capsys)
    assert (code, out) == (3, "")
    assert errors == [
        f"ckit: error: {directory / 'skips.yaml'}: skips.1 ('unit/opspec/**'): expires "
        f"{expires}, more than 180 days after standard v1 was released (2026-11-01); set "
        "2027-04-30 or earlier"
    ]


def test_expiry_beyond_max_lifetime_is_refused_at_run_start(tmp_path: Path) -> None:
    manifest = load_skip_manifest(
        _manifest(tmp_path, skip_entry("unit/**", expires="9999-12-31"))
    )
    with pytest.raises(InputError, match=r"skips\.0 \('unit/\*\*'\): expires 9999-12-31"):
        refuse_disallowed_entries(manifest, load_standard(), LOCKED_UNIT_IDS)


def test_never_skip_entry_is_refused_at_run_start(tmp_path: Path) -> None:
    manifest = load_skip_manifest(_manifest(tmp_path, skip_entry("unit/opinfo/add/float32/*")))
    with pytest.raises(InputError, match="matches never-skip test") as refused:
        refuse_disallowed_entries(manifest, load_standard(), LOCKED_UNIT_IDS)
    assert "\n" not in str(refused.value)


def test_the_shipped_manifests_stay_within_the_limits() -> None:
    standard = load_standard()
    ids = all_locked_ids(standard)
    for vendor in list_vendor_ids():
        refuse_disallowed_entries(
            load_skip_manifest(load_vendor(vendor).skip_manifest_path), standard, ids
        )


def test_validate_warns_about_duplicate_entry(
    kit_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entry = skip_entry("unit/opspec/**")
    write_vendor(tmp_path / "vendors", skips=skips_yaml(entry, entry))
    code, _, warnings = _validate(capsys)
    assert code == 0
    assert len(warnings) == 1
    assert "skips.1" in warnings[0] and "skips.0 has the same test" in warnings[0]


def test_no_stale_warning_before_lists_are_locked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A kit home whose standard has no tests/ directory yet: stale detection is skipped.
    standard = tmp_path / "home" / "standards" / "v1"
    standard.mkdir(parents=True)
    v1 = standard_directory("v1") / "standard.yaml"  # a standard that extends none
    (standard / "standard.yaml").write_bytes(v1.read_bytes())
    monkeypatch.setenv("CKIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CKIT_VENDORS_DIR", str(tmp_path / "vendors"))
    write_vendor(tmp_path / "vendors", skips=skips_yaml(skip_entry("unit/opinfo/gone/**")))
    assert _validate(capsys) == (0, "OK acme\n", [])


def test_entries_of_tiers_without_a_locked_list_are_not_called_stale(
    kit_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Only unit.txt is locked: a models entry, or one whose tier is a glob, has no evidence yet.
    skips = skips_yaml(skip_entry("models/hf/gone/**"), skip_entry("*/opinfo/gone/**"))
    write_vendor(tmp_path / "vendors", skips=skips)
    assert _validate(capsys) == (0, "OK acme\n", [])


def test_glob_tier_is_judged_once_every_list_is_locked(
    kit_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    locked = kit_home / "standards" / "v1" / "tests"
    (locked / "models.txt").write_text("models/hf/bert/forward\n", encoding="utf-8")
    (locked / "deploy.txt").write_text("deploy/imports\n", encoding="utf-8")
    (locked / "flows.txt").write_text("flows/onnxruntime_cpu/opinfo/add/float32/0\n",
                                      encoding="utf-8")
    skips = skips_yaml(skip_entry("**/bfloat16/sample1"), skip_entry("*/opinfo/gone/**"))
    write_vendor(tmp_path / "vendors", skips=skips)
    code, _, errors = _validate(capsys)
    assert code == 3
    assert len(errors) == 1 and "skips.1" in errors[0] and "matches no test" in errors[0]
