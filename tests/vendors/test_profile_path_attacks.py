"""Issue 24's probe: a path field of ``vendor.yaml`` (skip manifest, install script, a local
requirement) could name a file outside the vendor directory, so validating, running or
installing a profile read or ran whatever the path reached. Each is refused with one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.cli import main
from kit.errors import ExitCode

PROFILE = """\
id: acme
display_name: Acme NPU
contact: Acme Conformance <conformance@acme.example>
docs_url: https://acme.example/docs
device_type: cpu
dtypes: [float32]
skip_manifest: {skips}
{extra}
"""


def _profile(root: Path, skips: str = "skips.yaml", extra: str = "") -> Path:
    directory = root / "vendors" / "acme"
    directory.mkdir(parents=True)
    (directory / "vendor.yaml").write_text(PROFILE.format(skips=skips, extra=extra))
    (directory / "skips.yaml").write_text("skips: []\n")
    (root / "elsewhere.yaml").write_text("skips: []\n")  # a real file outside, for the attacks
    return directory


def _refusal(directory: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["vendors", "validate", str(directory)]) == ExitCode.INPUT_ERROR
    (line,) = capsys.readouterr().err.splitlines()
    return line


@pytest.mark.parametrize("skips", ["../../elsewhere.yaml", "{root}/elsewhere.yaml"])
def test_skip_manifest_outside_the_vendor_directory_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], skips: str,
) -> None:
    directory = _profile(tmp_path, skips=skips.format(root=tmp_path))
    line = _refusal(directory, capsys)
    assert "vendor.yaml: skip_manifest: " in line
    assert f"is outside the vendor directory {directory}: give a path inside it" in line


def test_skip_manifest_linked_out_of_the_vendor_directory_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    directory = _profile(tmp_path, skips="linked.yaml")
    (directory / "linked.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    assert "is outside the vendor directory" in _refusal(directory, capsys)


def test_install_script_outside_the_vendor_directory_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    directory = _profile(tmp_path, extra="install_script: /usr/bin/true")
    line = _refusal(directory, capsys)
    assert "vendor.yaml: install_script: '/usr/bin/true' is outside the vendor directory" in line


def test_local_requirement_outside_the_vendor_directory_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    directory = _profile(tmp_path, extra="requirements: [../other/pkg]")
    line = _refusal(directory, capsys)
    assert "vendor.yaml: requirements.0: '../other/pkg' is outside the vendor directory" in line


def test_paths_inside_the_vendor_directory_still_validate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    directory = _profile(tmp_path, skips="./skips.yaml", extra="requirements: [./pkg]")
    (directory / "pkg").mkdir()
    (directory / "pkg" / "pyproject.toml").write_text("[project]\nname = 'acme-pkg'\n")
    assert main(["vendors", "validate", str(directory)]) == ExitCode.OK, capsys.readouterr().err
