"""A profile's ``build`` step: real shell commands run by ``ckit vendors install`` in a throwaway
vendor directory (no compiler needed: cppnpu's real C++ build is tests/cppnpu)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from vendors_helpers import GOOD_PROFILE, write_vendor

from kit.cli import main
from kit.standard import current_torch_release

#: Writes what the build sees into the vendor directory, then says so on both streams.
REPORTING_BUILD = """\
build:
  commands:
    - echo "$PYTHON" > python.txt; for f in $PIP_CONSTRAINT; do cat "$f"; done > constraint.txt
    - echo "$GREETING" > greeting.txt; command -v python > on-path.txt
    - echo built; echo 'a warning' >&2
  env:
    GREETING: "hello from vendor.yaml"
"""


@pytest.fixture
def vendors_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CKIT_VENDORS_DIR", str(tmp_path))
    return tmp_path


def _install(capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], list[str]]:
    code = main(["vendors", "install", "acme"])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err.splitlines()


def _log_named_by(line: str) -> Path:
    return Path(line.rsplit("output: ", 1)[1].split(")")[0])


def test_build_runs_in_the_vendor_directory_tied_to_the_kit_interpreter(
    vendors_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hosts = tmp_path / "host-constraints.txt"
    hosts.write_text("numpy<3\n")
    monkeypatch.setenv("PIP_CONSTRAINT", str(hosts))
    directory = write_vendor(vendors_dir, profile=GOOD_PROFILE + REPORTING_BUILD)
    code, out, err = _install(capsys)
    assert code == 0, err
    assert err == []
    assert [line.split(": ", 2)[1] for line in out[:3]] == [
        "build step 1/3", "build step 2/3", "build step 3/3"
    ]
    assert out[-1].startswith("OK acme: installed 0 requirement(s); built (output: ")
    assert (directory / "python.txt").read_text().strip() == sys.executable
    # The host's constraints stay in force, and the torch pin is added to them.
    assert (directory / "constraint.txt").read_text() == (
        f"numpy<3\ntorch=={current_torch_release()}\n"
    )
    assert (directory / "greeting.txt").read_text() == "hello from vendor.yaml\n"
    assert (directory / "on-path.txt").read_text().strip() == str(
        Path(sys.executable).parent / "python"
    )
    log = _log_named_by(out[-1])
    # Both streams of every command, each after its command line, kept after success.
    assert log.read_text().splitlines()[-4:] == [
        "$ echo built; echo 'a warning' >&2", "built", "a warning", "[exit 0]"
    ]
    log.unlink()


def test_failing_build_step_is_one_line_naming_the_step_and_its_log(
    vendors_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build = (
        "build:\n  commands:\n    - echo compiling\n"
        "    - \"echo 'c++: fatal error' >&2; exit 3\"\n    - touch never-reached\n"
    )
    directory = write_vendor(vendors_dir, profile=GOOD_PROFILE + build)
    code, out, err = _install(capsys)
    assert code == 6
    assert len(err) == 1
    assert err[0].startswith(
        "ckit: error: vendors install acme: build step 2/3 failed (exit 3): "
        "\"echo 'c++: fatal error' >&2; exit 3\"; its output: "
    )
    log = Path(err[0].rsplit("its output: ", 1)[1])
    assert "c++: fatal error\n[exit 3]\n" in log.read_text()
    assert not (directory / "never-reached").exists()
    assert len(out) == 2  # the two steps that started, and no OK line
    log.unlink()


@pytest.mark.parametrize(
    ("build", "problem"),
    [
        ("build: [make]", "build: expected a mapping of commands and env, got a list"),
        ("build: {commands: []}", "build.commands: expected a non-empty list of a shell command"),
        ("build: {commands: [make], jobs: 2}", "build.jobs: unknown key; the keys here are"),
        ("build: {commands: [make], env: {max-jobs: '2'}}",
         "build.env.max-jobs: expected a variable name such as MAX_JOBS"),
        ("build: {commands: [make], env: {MAX_JOBS: 2}}", "build.env.MAX_JOBS: expected text"),
    ],
    ids=["list", "no-commands", "unknown-key", "env-name", "env-number"],
)
def test_malformed_build_is_refused_before_anything_runs(
    vendors_dir: Path, capsys: pytest.CaptureFixture[str], build: str, problem: str
) -> None:
    write_vendor(vendors_dir, profile=GOOD_PROFILE + build + "\n")
    code, out, err = _install(capsys)
    assert (code, out, len(err)) == (3, [], 1)
    assert problem in err[0]


def test_the_same_install_again_only_checks_the_stack_imports(
    vendors_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``make certify`` installs its vendor each time: the same sources for the same Python
    and torch are not built again (cppnpu's C++ build took minutes); an edited source is."""
    build = "build:\n  commands:\n    - echo built >> builds.txt\n"
    directory = write_vendor(vendors_dir, profile=GOOD_PROFILE + build)
    code, first, _ = _install(capsys)
    assert code == 0
    code, out, err = _install(capsys)
    assert (code, err) == (0, [])
    assert out == ["OK acme: already installed from the same sources for this Python and torch; "
                   "imported none listed (--force installs it again)"]
    assert (directory / "builds.txt").read_text() == "built\n"
    (directory / "skips.yaml").write_text("skips: []\n# edited\n", encoding="utf-8")
    code, out, _ = _install(capsys)
    assert code == 0 and out[-1].startswith("OK acme: installed 0 requirement(s); built")
    assert (directory / "builds.txt").read_text() == "built\nbuilt\n"
    for line in first + out:
        if "output: " in line:
            _log_named_by(line).unlink(missing_ok=True)
