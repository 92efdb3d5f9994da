"""The judge's command line and environment (``kit.runner.isolation``), without a run: the
interpreter it builds runs no start-up hook and still imports the kit. The attacks through a
whole run are in ``test_judge_isolation.py``."""

from __future__ import annotations

import os
import site
import subprocess
import sys
from pathlib import Path

import pytest

import kit
from kit.runner.isolation import (
    AUTOLOAD_VARIABLE,
    isolated_command,
    isolated_env,
    site_directories,
)
from kit.vendor_code import NO_VENDOR_CODE_VARIABLE

#: Fed to ``python -m code`` in the isolated interpreter: what it imports and from where.
PROBE = (
    "import sys, kit; print('PROBE', sys.flags.isolated, sys.flags.no_site, 'site' in sys.modules, "
    "'sitecustomize' in sys.modules, kit.__file__, sys.path)\n"
)


def test_the_environment_turns_off_autoload_vendor_entry_points_and_preloads() -> None:
    env = isolated_env({"LD_PRELOAD": "/x/libhook.so", "LD_AUDIT": "/x/libaudit.so",
                        "OMP_NUM_THREADS": "2", AUTOLOAD_VARIABLE: "1"})
    assert env == {"OMP_NUM_THREADS": "2", AUTOLOAD_VARIABLE: "0", NO_VENDOR_CODE_VARIABLE: "1"}


def test_the_interpreter_runs_no_start_up_hook_and_imports_the_kit(tmp_path: Path) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text("print('HOOKED')\n", encoding="utf-8")
    env = isolated_env({**os.environ, "PYTHONPATH": str(hooks)})
    done = subprocess.run(isolated_command("code", []), input=PROBE, env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=True)
    assert "HOOKED" not in done.stdout
    (line,) = [line for line in done.stdout.splitlines() if "PROBE " in line]
    isolated, no_site, site_loaded, hooked, kit_file, path = line.split("PROBE ")[1].split(" ", 5)
    assert (isolated, no_site, site_loaded, hooked) == ("1", "1", "False", "False")
    assert kit_file == str(Path(__import__("kit").__file__).resolve())
    assert str(hooks) not in path and str(tmp_path) not in path


def test_a_directory_put_ahead_of_site_packages_is_not_on_the_judge_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What a .pth file's ``import sys; sys.path.insert(0, ...)`` does to the kit's process.
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    found = site_directories()
    assert found[0] == os.path.realpath(Path(kit.__file__).parent.parent)
    own = [os.path.realpath(entry) for entry in site.getsitepackages() if os.path.isdir(entry)]
    assert found[1:] == own
    assert str(tmp_path) not in found
