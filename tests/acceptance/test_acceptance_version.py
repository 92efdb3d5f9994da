"""``ckit version``: the kit, its standard and torch release, its digest, and whether released."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from acceptance_helpers import kit_home_releasing

import kit
from kit.cli import main
from kit.errors import ExitCode
from kit.hashing import kit_digest, released_kits_path
from kit.standard import load_standard


def run_version(capsys: pytest.CaptureFixture[str], *options: str) -> str:
    assert main(["version", *options]) == ExitCode.OK
    return capsys.readouterr().out


def test_json_names_the_running_kit_and_its_unreleased_digest(capsys):
    identity = json.loads(run_version(capsys, "--json"))
    assert identity == {
        "version": kit.__version__,
        "standard": load_standard().version,
        "torch_release": load_standard().torch_release,
        "digest": kit_digest(),
        "released": False,
        "release": None,
        "released_kits": str(released_kits_path()),
    }


def test_digest_prints_only_the_digest(capsys):
    assert run_version(capsys, "--digest") == f"{kit_digest()}\n"


def test_the_text_says_a_development_checkout_is_not_released(capsys):
    assert run_version(capsys).splitlines() == [
        f"ckit {kit.__version__}",
        f"standard: {load_standard().version}",
        f"torch release: {load_standard().torch_release}",
        f"kit digest: {kit_digest()}",
        "not a released kit: digest not in standards/released-kits.yaml",
    ]


def test_a_listed_digest_is_named_as_its_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    digest = kit_digest()
    monkeypatch.setenv("CKIT_HOME", str(kit_home_releasing(tmp_path / "home", digest)))
    assert run_version(capsys).splitlines()[-1] == "released kit 0.1.0 of 2027-01-31"
    identity = json.loads(run_version(capsys, "--json"))
    assert (identity["digest"], identity["released"]) == (digest, True)
    assert identity["release"] == {"version": "0.1.0", "date": "2027-01-31"}


def test_json_and_digest_are_one_or_the_other(capsys):
    with pytest.raises(SystemExit) as usage:
        main(["version", "--json", "--digest"])
    assert usage.value.code == ExitCode.USAGE_ERROR
    assert "not allowed with argument" in capsys.readouterr().err


def test_the_version_option_is_unchanged(capsys):
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out == f"ckit {kit.__version__}\n"
