"""``ckit vendors install`` refuses, before installing, to change a package the kit depends on.

The direct check needs no pip and no network (a pinned ``transformers==4.40.0``); the dry-run
check runs real pip, offline, in a throwaway venv (see ``test_vendors_install``), on a local
project that claims to be one of the kit's dependencies.
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest
from test_vendors_install import _ckit_in_venv, _distributions, _profile, _project, venv_python
from vendors_helpers import write_vendor

from kit.cli import main

__all__ = ["venv_python"]  # the module-scoped fixture, shared with test_vendors_install

KIT_EXPECTTEST = importlib.metadata.version("expecttest")


def test_requirement_downgrading_transformers_is_refused_before_installing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CKIT_VENDORS_DIR", str(tmp_path))
    write_vendor(tmp_path, profile=_profile(["numpy", "transformers==4.40.0"], []))
    installed = importlib.metadata.version("transformers")
    kit_wants = next(
        r for r in importlib.metadata.requires("accelerator-conformance-kit") or []
        if r.startswith("transformers")
    )

    assert main(["vendors", "install", "acme"]) == 3

    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "ckit: error: vendors install acme: requirement 'transformers==4.40.0' would change "
        f"transformers, which the kit depends on ({kit_wants}): installed {installed}, wanted "
        "==4.40.0; nothing was installed (--allow-kit-deps-change installs it anyway)\n"
    )
    assert importlib.metadata.version("transformers") == installed


def test_local_project_replacing_a_kit_dependency_is_refused_by_the_dry_run(
    venv_python: Path, tmp_path: Path
) -> None:
    vendors = tmp_path / "vendors"
    directory = write_vendor(vendors, profile=_profile(["./src/expecttest"], []))
    _project(directory / "src" / "expecttest", "expecttest", "0.0.1", "expecttest")

    done = _ckit_in_venv(venv_python, vendors, "acme")

    assert done.returncode == 3, done.stderr
    assert done.stderr.splitlines() == [
        "ckit: error: vendors install acme: installing the requirements would change "
        f"expecttest, which the kit depends on (expecttest): installed {KIT_EXPECTTEST}, "
        "wanted 0.0.1; nothing was installed (--allow-kit-deps-change installs it anyway)"
    ]
    assert _distributions(venv_python, "expecttest") == f"{KIT_EXPECTTEST} False"


def test_allow_kit_deps_change_installs_and_says_what_changed(
    venv_python: Path, tmp_path: Path
) -> None:
    vendors = tmp_path / "vendors"
    directory = write_vendor(vendors, profile=_profile(["./src/expecttest"], ["expecttest"]))
    _project(directory / "src" / "expecttest", "expecttest", "0.0.1", "expecttest")

    done = _ckit_in_venv(venv_python, vendors, "acme", "--allow-kit-deps-change")

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == (
        "OK acme: installed 1 requirement(s); imported expecttest; changed 1 kit "
        "dependency(ies) as allowed"
    )
    assert (
        "ckit: warning: --allow-kit-deps-change: installing the requirements would change "
        f"expecttest, which the kit depends on (expecttest): installed {KIT_EXPECTTEST}, "
        "wanted 0.0.1"
    ) in done.stderr.splitlines()
    # The venv got the change; the kit's own environment did not.
    assert _distributions(venv_python, "expecttest") == "0.0.1 True"
    main_env = subprocess.run(
        [sys.executable, "-c", "import importlib.metadata as m; print(m.version('expecttest'))"],
        capture_output=True, text=True, check=True,
    )
    assert main_env.stdout.strip() == KIT_EXPECTTEST
