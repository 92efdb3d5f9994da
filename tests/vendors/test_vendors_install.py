"""``ckit vendors install``: real pip, real throwaway projects, a fresh venv per module.

The venv is made with ``--system-site-packages`` and a ``.pth`` that adds the kit's own
environment (torch, pip, setuptools, the editable kit) behind it, so pip installs into the fresh
venv only and the main environment is never touched. pip runs offline (``PIP_NO_INDEX``) with
the global pip config ignored.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from vendors_helpers import GOOD_PROFILE, bridged_venv, offline_pip_env, write_vendor

from kit.cli import main


def _project(root: Path, name: str, version: str, package: str) -> Path:
    """A throwaway setuptools project with one package."""
    (root / package).mkdir(parents=True)
    (root / package / "__init__.py").write_text(f"VERSION = {version!r}\n")
    (root / "pyproject.toml").write_text(
        textwrap.dedent(
            f"""\
            [build-system]
            requires = ["setuptools"]
            build-backend = "setuptools.build_meta"

            [project]
            name = "{name}"
            version = "{version}"

            [tool.setuptools]
            packages = ["{package}"]
            """
        )
    )
    return root


def _profile(requirements: list[str], modules: list[str]) -> str:
    text = GOOD_PROFILE.replace("requirements: []", f"requirements: {requirements!r}")
    return text.replace("import_modules: []", f"import_modules: {modules!r}")


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bridged_venv(tmp_path_factory.mktemp("venv"))


def _ckit_in_venv(python: Path, vendors: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = offline_pip_env(CKIT_VENDORS_DIR=str(vendors))
    command = [str(python), "-m", "kit", "vendors", "install", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False)


def _distributions(python: Path, name: str) -> str:
    """Version of ``name`` as the venv sees it, and whether it lives inside the venv."""
    script = (
        "import importlib.metadata as m, sys; d = m.distribution(sys.argv[1]); "
        "print(d.version, str(d.locate_file('')).startswith(sys.prefix))"
    )
    done = subprocess.run(
        [str(python), "-c", script, name], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_install_local_project_then_imports_it(venv_python: Path, tmp_path: Path) -> None:
    vendors = tmp_path / "vendors"
    directory = write_vendor(vendors, profile=_profile(["./src/tinyvendor"], ["tinyvendor"]))
    _project(directory / "src" / "tinyvendor", "tinyvendor", "0.1", "tinyvendor")

    done = _ckit_in_venv(venv_python, vendors, "acme")

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == (
        "OK acme: installed 1 requirement(s); imported tinyvendor"
    )
    assert _distributions(venv_python, "tinyvendor") == "0.1 True"
    # The main environment did not get it.
    main_env = subprocess.run(
        [sys.executable, "-c", "import tinyvendor"], capture_output=True, check=False
    )
    assert main_env.returncode != 0


@pytest.mark.parametrize("requirement", ["./src/torch"], ids=["local-project-named-torch"])
def test_requirement_replacing_torch_is_refused_by_the_constraint(
    venv_python: Path, tmp_path: Path, requirement: str
) -> None:
    vendors = tmp_path / "vendors"
    directory = write_vendor(vendors, profile=_profile([requirement], []))
    _project(directory / "src" / "torch", "torch", "2.12.0", "torch")

    done = _ckit_in_venv(venv_python, vendors, "acme")

    assert done.returncode == 6
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("ckit: error: vendors install acme: step 'pip install' failed")
    # The refusal comes from the torch constraint, not from a missing download.
    assert "conflicting dependencies" in lines[0]
    log = Path(lines[0].rsplit("pip's error output: ", 1)[1].rstrip(")"))
    assert "ResolutionImpossible" in log.read_text()
    log.unlink()
    # torch is still the release, from the main environment, not a copy in the venv.
    assert _distributions(venv_python, "torch").split() == ["2.13.0+cpu", "False"]


@pytest.mark.parametrize("requirement", ["torch==2.12.0", "torch>=2.14", "torch<2.13"])
def test_requirement_pinning_another_torch_is_refused_before_pip_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    requirement: str,
) -> None:
    monkeypatch.setenv("CKIT_VENDORS_DIR", str(tmp_path))
    write_vendor(tmp_path, profile=_profile([requirement], ["json"]))
    for command in (["vendors", "validate", "acme"], ["vendors", "install", "acme"]):
        assert main(command) == 3
        err = capsys.readouterr().err
        assert err.count("\n") == 1, err
        assert f"{requirement!r} excludes torch 2.13.0" in err


def test_import_failure_names_the_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # No requirements: pip is not run; the confirmation import still is.
    monkeypatch.setenv("CKIT_VENDORS_DIR", str(tmp_path))
    write_vendor(tmp_path, profile=_profile([], ["json", "acme_backend_not_installed"]))
    assert main(["vendors", "install", "acme"]) == 5
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "ckit: error: vendors install acme: step 'import acme_backend_not_installed' failed: "
        "ModuleNotFoundError: No module named 'acme_backend_not_installed'\n"
    )


def test_nothing_to_install_still_confirms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CKIT_VENDORS_DIR", str(tmp_path))
    write_vendor(tmp_path, profile=_profile([], ["json"]))
    assert main(["vendors", "install", "acme"]) == 0
    assert capsys.readouterr().out == "OK acme: installed 0 requirement(s); imported json\n"


def test_pip_option_in_requirements_never_reaches_pip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CKIT_VENDORS_DIR", str(tmp_path))
    write_vendor(tmp_path, profile=_profile(["--extra-index-url=https://evil.example/"], []))
    assert main(["vendors", "install", "acme"]) == 3
    err = capsys.readouterr().err
    assert ": requirements.0: expected a requirement or a path, got the pip option" in err
