"""Malformed profiles and skip manifests: each mistake yields ONE line naming file, field, want.

Every case goes through the real CLI (``kit.cli.main``) against real files in ``tmp_path``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from vendors_helpers import GOOD_PROFILE, skip_entry, skips_yaml, write_vendor

from kit.cli import main


@dataclass(frozen=True)
class Mistake:
    name: str
    #: "vendor.yaml" or "skips.yaml": the file the message must name.
    file: str
    text: str
    #: Fragments the one-line message must contain (the field and what was expected).
    expected: tuple[str, ...]


def _profile(old: str, new: str) -> str:
    assert old in GOOD_PROFILE
    return GOOD_PROFILE.replace(old, new)


MISTAKES = [
    Mistake(
        "missing-device-type",
        "vendor.yaml",
        _profile("device_type: cpu\n", ""),
        ("device_type", "missing"),
    ),
    Mistake(
        "dtype-typo",
        "vendor.yaml",
        _profile("[float32, bfloat16]", "[float32, bfloat61]"),
        (": dtypes.1: expected one of", "bfloat16", "'bfloat61'"),
    ),
    Mistake(
        "autocast-not-lower-precision",
        "vendor.yaml",
        GOOD_PROFILE + "autocast: [float32]\n",
        (": autocast.0: expected one of", "bfloat16", "'float32'"),
    ),
    Mistake(
        "unknown-field",
        "vendor.yaml",
        GOOD_PROFILE + "colour: blue\n",
        ("colour: unknown key", "the keys here are id, display_name"),
    ),
    Mistake(
        "bad-docs-url",
        "vendor.yaml",
        _profile("https://acme.example/docs", "acme.example/docs"),
        (": docs_url: expected an http:// or https:// link", "'acme.example/docs'"),
    ),
    Mistake(
        "id-not-directory-name",
        "vendor.yaml",
        _profile("id: acme", "id: acme-labs"),
        (": id: expected the directory name 'acme'", "'acme-labs'"),
    ),
    Mistake(
        "duplicate-key",
        "vendor.yaml",
        GOOD_PROFILE + "dtypes: [float64]\n",
        ("invalid YAML", "line 11", "duplicate key 'dtypes'"),
    ),
    Mistake(
        "not-yaml",
        "vendor.yaml",
        "id: acme\ndtypes: [float32\n",
        ("invalid YAML", "line 3"),
    ),
    Mistake(
        "not-yaml-prose",
        "vendor.yaml",
        "This backend supports everything, trust us.\n",
        ("expected a mapping of profile fields",),
    ),
    Mistake(
        "skip-entry-without-expiry",
        "skips.yaml",
        "skips:\n  - test: unit/opinfo/add/bfloat16/*\n    reason: precision\n"
        "    tracking: https://acme.example/issues/1\n",
        (": skips.0.expires: missing",),
    ),
    Mistake(
        "skip-reason-not-in-set",
        "skips.yaml",
        skips_yaml(skip_entry("unit/opinfo/add/bfloat16/*", reason="flaky")),
        (": skips.0.reason: expected one of", "upstream-bug", "'flaky'"),
    ),
    Mistake(
        "skip-expiry-not-a-date",
        "skips.yaml",
        skips_yaml(skip_entry("unit/opinfo/add/bfloat16/*", expires="next-quarter")),
        (": skips.0.expires: expected a real date YYYY-MM-DD", "'next-quarter'"),
    ),
    Mistake(
        "skip-expiry-impossible-quoted-date",
        "skips.yaml",
        skips_yaml(skip_entry("unit/opinfo/add/bfloat16/*", expires="'2027-02-30'")),
        (": skips.0.expires: expected a real date", "'2027-02-30'"),
    ),
    Mistake(
        "skip-tracking-not-a-link",
        "skips.yaml",
        skips_yaml(skip_entry("unit/opinfo/add/bfloat16/*", tracking="ACME-123")),
        (": skips.0.tracking: expected an http:// or https:// link", "'ACME-123'"),
    ),
    Mistake(
        "requirement-is-a-pip-option",
        "vendor.yaml",
        _profile("requirements: []", "requirements: ['--index-url=https://evil.example/simple']"),
        (": requirements.0: expected a requirement or a path", "pip option", "--index-url"),
    ),
    Mistake(
        "requirement-path-missing",
        "vendor.yaml",
        _profile("requirements: []", "requirements: [./wheels/acme-1.0-py3-none-any.whl]"),
        (
            ": requirements.0: expected a wheel or project path",
            "does not exist",
            "acme-1.0-py3-none-any.whl",
        ),
    ),
    Mistake(
        "install-script-missing",
        "vendor.yaml",
        GOOD_PROFILE + "install_script: setup-driver.sh\n",
        (": install_script: expected a file", "does not exist", "'setup-driver.sh'"),
    ),
    Mistake(
        "process-group-backend-without-its-transport",
        "vendor.yaml",
        GOOD_PROFILE + "process_group_backend: gloo\n",
        (": process_group_transport: missing;", "native", "host-copy"),
    ),
    Mistake(
        "process-group-transport-unknown",
        "vendor.yaml",
        GOOD_PROFILE + "process_group_backend: gloo\nprocess_group_transport: rdma\n",
        (": process_group_transport: expected one of native, host-copy", "'rdma'"),
    ),
    Mistake(
        "process-group-transport-without-a-backend",
        "vendor.yaml",
        GOOD_PROFILE + "process_group_transport: native\n",
        (": process_group_transport: given without process_group_backend",),
    ),
]

#: Crashes (a traceback instead of one line) in kit/yamlio.py, reported to the lead with a fix;
#: strict, so they fail loudly once fixed and the marker can go.
YAMLIO_CRASHES = [
    Mistake(
        "skip-expiry-impossible-unquoted-date",
        "skips.yaml",
        skips_yaml(skip_entry("unit/opinfo/add/bfloat16/*", expires="2027-02-30")),
        (": skips.0.expires: expected a real date", "2027-02-30"),
    ),
    Mistake(
        "unhashable-mapping-key",
        "vendor.yaml",
        GOOD_PROFILE + "? [a, b]\n: 1\n",
        ("invalid YAML",),
    ),
]


def _write(tmp_path: Path, mistake: Mistake) -> Path:
    if mistake.file == "vendor.yaml":
        directory = write_vendor(tmp_path, profile=mistake.text)
    else:
        directory = write_vendor(tmp_path, skips=mistake.text)
    return directory / mistake.file


def _assert_one_line_error(
    capsys: pytest.CaptureFixture[str], path: Path, mistake: Mistake
) -> None:
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    line = lines[0]
    assert line.startswith("ckit: error: ")
    assert str(path) in line
    for fragment in mistake.expected:
        assert fragment in line, f"{fragment!r} not in {line!r}"
    assert "OK" not in out


@pytest.fixture
def vendors_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CKIT_VENDORS_DIR", str(tmp_path))
    return tmp_path


def test_good_profile_validates(vendors_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The baseline every mistake is derived from: only the mistake makes a case fail.
    write_vendor(vendors_dir)
    assert main(["vendors", "validate"]) == 0
    out, err = capsys.readouterr()
    assert out == "OK acme\n"
    assert err == ""


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.name for m in MISTAKES])
def test_mistake_is_one_line_naming_file_field_and_expectation(
    vendors_dir: Path, capsys: pytest.CaptureFixture[str], mistake: Mistake
) -> None:
    path = _write(vendors_dir, mistake)
    assert main(["vendors", "validate"]) == 3
    _assert_one_line_error(capsys, path, mistake)


@pytest.mark.parametrize("mistake", YAMLIO_CRASHES, ids=[m.name for m in YAMLIO_CRASHES])
def test_yaml_edge_case_is_one_line(
    vendors_dir: Path, capsys: pytest.CaptureFixture[str], mistake: Mistake
) -> None:
    path = _write(vendors_dir, mistake)
    assert main(["vendors", "validate"]) == 3
    _assert_one_line_error(capsys, path, mistake)


def test_profile_not_utf8_is_one_line(
    vendors_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = write_vendor(vendors_dir)
    (directory / "vendor.yaml").write_bytes(GOOD_PROFILE.encode("utf-16"))
    assert main(["vendors", "validate"]) == 3
    _, err = capsys.readouterr()
    assert len(err.strip().splitlines()) == 1
    assert str(directory / "vendor.yaml") in err


def test_missing_skip_manifest_names_the_file(
    vendors_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = write_vendor(vendors_dir, skips=None)
    assert main(["vendors", "validate", "acme"]) == 3
    _, err = capsys.readouterr()
    assert err == f"ckit: error: {directory / 'skips.yaml'}: file not found\n"


def test_unknown_vendor_id_lists_known_ones(
    vendors_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_vendor(vendors_dir)
    assert main(["vendors", "validate", "acme-typo"]) == 3
    _, err = capsys.readouterr()
    assert len(err.strip().splitlines()) == 1
    assert "'acme-typo'" in err and "known vendors: acme" in err
