"""``ckit vendors validate`` catches what a run would fail on, as errors (issue 10)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from vendors_helpers import (
    GOOD_PROFILE,
    skip_entry,
    skips_yaml,
    write_locked_standard,
    write_vendor,
)

from kit import paths
from kit.cli import main
from kit.standard.catalogue import standard_directory

LOCKED_UNIT_IDS = [
    "unit/opinfo/add/float32/sample0",
    "unit/opinfo/sub/float32/sample0",
    "unit/opinfo/sub/bfloat16/sample0",
]


@pytest.fixture
def vendors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The vendors directory of a kit home whose standard v1 has a locked unit list."""
    source = standard_directory("v1") / "standard.yaml"  # a standard that extends none
    home = write_locked_standard(tmp_path / "home", source, LOCKED_UNIT_IDS)
    monkeypatch.setenv("CKIT_HOME", str(home))
    monkeypatch.setenv("CKIT_VENDORS_DIR", str(tmp_path / "vendors"))
    return tmp_path / "vendors"


def _validate(capsys: pytest.CaptureFixture[str]) -> tuple[int, str, list[str]]:
    code = main(["vendors", "validate", "--today", "2026-11-22"])
    out, err = capsys.readouterr()
    return code, out, err.strip().splitlines()


def test_skip_of_a_required_test_is_an_error(
    vendors: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # sub/float32 is required ("unit/*/*/float32/*") though not never-skip.
    directory = write_vendor(vendors, skips=skips_yaml(skip_entry("unit/opinfo/sub/float32/*")))
    assert _validate(capsys) == (
        3,
        "",
        [
            f"ckit: error: {directory / 'skips.yaml'}: skips.0 ('unit/opinfo/sub/float32/*'): "
            "matches required test 'unit/opinfo/sub/float32/sample0', so the run can grade "
            "non-conformant at best; remove the entry, or declare accepts_grade: "
            "non-conformant in vendor.yaml"
        ],
    )


def test_skip_of_a_required_test_is_a_warning_naming_the_grade_when_accepted(
    vendors: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = GOOD_PROFILE + "accepts_grade: non-conformant\n"
    skips = skips_yaml(skip_entry("unit/opinfo/sub/float32/*"))
    directory = write_vendor(vendors, profile=profile, skips=skips)
    assert _validate(capsys) == (
        0,
        "OK acme\n",
        [
            f"ckit: warning: {directory / 'skips.yaml'}: skips.0 ('unit/opinfo/sub/float32/*'): "
            "matches required test 'unit/opinfo/sub/float32/sample0', so the run can grade "
            "non-conformant at best (the profile accepts non-conformant)"
        ],
    )


def test_accepting_a_better_grade_than_the_skip_costs_is_still_an_error(
    vendors: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = GOOD_PROFILE + "accepts_grade: conformant-with-exceptions\n"
    skips = skips_yaml(skip_entry("unit/opinfo/sub/float32/*"))
    write_vendor(vendors, profile=profile, skips=skips)
    code, out, errors = _validate(capsys)
    assert (code, out, len(errors)) == (3, "", 1)
    assert "can grade non-conformant at best; remove the entry" in errors[0]


def test_accepts_grade_that_the_standard_does_not_have(
    vendors: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = write_vendor(vendors, profile=GOOD_PROFILE + "accepts_grade: good-enough\n")
    assert _validate(capsys) == (
        3,
        "",
        [
            f"ckit: error: {directory / 'vendor.yaml'}: accepts_grade: expected one of "
            "standard v1's grades conformant, conformant-with-exceptions, non-conformant, "
            "not-certifiable, got 'good-enough'"
        ],
    )


def test_skip_of_a_never_skip_test_stays_refused_whatever_the_profile_accepts(
    vendors: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Run start refuses it in any case, so validate cannot let it through.
    profile = GOOD_PROFILE + "accepts_grade: not-certifiable\n"
    skips = skips_yaml(skip_entry("unit/opinfo/add/float32/*"))
    write_vendor(vendors, profile=profile, skips=skips)
    code, _, errors = _validate(capsys)
    assert (code, len(errors)) == (3, 1)
    assert "matches never-skip test 'unit/opinfo/add/float32/sample0'" in errors[0]


def test_typo_in_an_import_module_names_the_module_and_the_import_error(
    vendors: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = GOOD_PROFILE.replace("import_modules: []", "import_modules: [json, jsn]")
    directory = write_vendor(vendors, profile=profile)
    code, out, errors = _validate(capsys)
    assert (code, out, len(errors)) == (3, "", 1)
    assert errors[0].startswith(
        f"ckit: error: {directory / 'vendor.yaml'}: import_modules: 'jsn' does not import "
        "in "
    )
    assert errors[0].endswith(": ModuleNotFoundError: No module named 'jsn'")


def test_import_module_that_raises_on_import_is_an_error_and_kit_process_is_untouched(
    vendors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A module that exists but fails on import, as a driver that cannot load would.
    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "acme_backend.py").write_text(
        "raise ImportError('libacme.so.3: cannot open shared object file\\nsecond line')\n"
    )
    monkeypatch.setenv("PYTHONPATH", f"{modules}:{paths.package_dir().parent}")
    profile = GOOD_PROFILE.replace("import_modules: []", "import_modules: [acme_backend]")
    write_vendor(vendors, profile=profile)
    code, _, errors = _validate(capsys)
    assert (code, len(errors)) == (3, 1)
    assert errors[0].endswith(
        "'acme_backend' does not import in "
        f"{sys.executable}: ImportError: libacme.so.3: cannot open shared "
        "object file"
    )
    assert "acme_backend" not in sys.modules


def test_import_modules_that_import_validate(
    vendors: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = GOOD_PROFILE.replace("import_modules: []", "import_modules: [json, email.parser]")
    write_vendor(vendors, profile=profile)
    assert _validate(capsys) == (0, "OK acme\n", [])


@pytest.mark.parametrize("pattern", ["Unit/opinfo/sub/bfloat16/*", "unit/opinfo/cumsum/*/*"])
def test_pattern_that_matches_no_locked_test_is_an_error(
    vendors: Path, capsys: pytest.CaptureFixture[str], pattern: str
) -> None:
    directory = write_vendor(vendors, skips=skips_yaml(skip_entry(pattern)))
    assert _validate(capsys) == (
        3,
        "",
        [
            f"ckit: error: {directory / 'skips.yaml'}: skips.0 ({pattern!r}): matches no test "
            "of the standard's locked test lists (patterns are case-sensitive): fix the pattern "
            "or remove the entry"
        ],
    )


def test_raw_scaffold_is_an_error_until_a_device_is_named(
    vendors: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["vendors", "init", "acme"]) == 0
    capsys.readouterr()
    code, _, errors = _validate(capsys)
    assert (code, len(errors)) == (3, 1)
    assert errors[0] == (
        f"ckit: error: {vendors / 'acme' / 'vendor.yaml'}: device_type: 'privateuseone' "
        "is not a device torch registers itself and import_modules is empty: edit vendor.yaml "
        "to name the device type your backend registers and the modules that register it"
    )


def test_a_backend_that_needs_torch_loaded_first_validates_without_listing_torch(
    vendors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A C++ backend links against torch's libraries: the kit imports torch before the
    profile's modules everywhere, so ``import_modules`` names the backend alone."""
    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "acme_backend.py").write_text(
        "import sys\n"
        "if 'torch' not in sys.modules:\n"
        "    raise ImportError('libc10.so: cannot open shared object file')\n"
    )
    monkeypatch.setenv("PYTHONPATH", f"{modules}:{paths.package_dir().parent}")
    profile = GOOD_PROFILE.replace("import_modules: []", "import_modules: [acme_backend]")
    write_vendor(vendors, profile=profile)
    assert _validate(capsys) == (0, "OK acme\n", [])
