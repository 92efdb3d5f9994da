"""The judge's import path is built from scratch (``kit.runner.isolation``): a directory that
``PYTHONPATH``, the user site or a ``.pth`` file puts on the kit process's path never reaches
the judge, however it is spelled.

torch imports optional modules at start-up that the kit's environment lacks (``opt_einsum``,
``dill``): a module under such a name on the judge's path runs inside every judge. Each test
below plants one as ``opt_einsum.py`` in a directory reached through one spelling, starts a
real kit process with it (which finds the planted module: the attack is live there) and the
judge's interpreter that process builds (which must not find it). The last test is one whole
run: the planted module patches the judge's CPU ``add`` and a faulty kernel must still fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from runner_helpers import ADD_FAULT, JUDGE_HERE, PAYLOAD, WRONG_ADD, evidence_of, records_by_id

import kit

#: The planted module: says where it ran, then tells torch it is not installed.
PLANTED = "print('PLANTED-MODULE-RAN')\nraise ImportError('opt_einsum: not installed')\n"
#: The kit process: where it finds the planted module, and the judge it starts, whose ``code``
#: console says where the judge finds it and what its path is (real paths).
KIT_PROCESS = """
import importlib.util, json, os, subprocess, sys
from kit.runner.isolation import isolated_command, isolated_env
spec = importlib.util.find_spec("opt_einsum")
probe = ("import importlib.util, json, os, sys; spec = importlib.util.find_spec('opt_einsum'); "
         "path = [os.path.realpath(e) for e in sys.path]; "
         "print('JUDGE', json.dumps([spec and spec.origin, path]))\\n")
judge = subprocess.run(isolated_command("code", []), input=probe,
                       env=isolated_env(dict(os.environ)), capture_output=True, text=True,
                       timeout=120, check=True)
print("KIT", json.dumps(spec and spec.origin))
print(judge.stdout)
"""


def plant(directory: Path) -> Path:
    """``opt_einsum.py`` in ``directory``, which is made if need be."""
    directory.mkdir(parents=True, exist_ok=True)
    planted = directory / "opt_einsum.py"
    planted.write_text(PLANTED, encoding="utf-8")
    return planted


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without ``PYTHON*`` variables, plus ``extra``."""
    kept = {name: value for name, value in os.environ.items() if not name.startswith("PYTHON")}
    return {**kept, **extra}


def judge_from(
    cwd: Path, env: dict[str, str], python: str = sys.executable, prelude: str = ""
) -> tuple[str | None, str | None, list[str]]:
    """Runs the kit process in ``cwd`` with ``env``: where it found ``opt_einsum``, where its
    judge found it, and the judge's path."""
    # A script elsewhere, as ``ckit`` is: its directory, not the working one, is the script's.
    script = cwd.parent / f"{cwd.name}-kit-process" / "kit_process.py"
    script.parent.mkdir()
    script.write_text(prelude + KIT_PROCESS, encoding="utf-8")
    done = subprocess.run([python, str(script)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "PLANTED-MODULE-RAN" not in done.stdout
    lines = done.stdout.splitlines()
    (kit_line,) = [line for line in lines if line.startswith("KIT ")]
    (judge_line,) = [line for line in lines if "JUDGE " in line]
    found_by_judge, judge_path = json.loads(judge_line.split("JUDGE ", 1)[1])
    return json.loads(kit_line[4:]), found_by_judge, judge_path


def assert_unreached(
    planted: Path, cwd: Path, env: dict[str, str], python: str = sys.executable,
    prelude: str = "",
) -> None:
    """The kit process imports the planted module (the spelling works), its judge cannot."""
    found_by_kit, found_by_judge, judge_path = judge_from(cwd, env, python, prelude)
    assert found_by_kit is not None
    assert os.path.realpath(found_by_kit) == os.path.realpath(planted)
    assert found_by_judge is None, found_by_judge
    assert os.path.realpath(planted.parent) not in judge_path
    assert os.path.realpath(Path(kit.__file__).parent.parent) in judge_path


def test_relative_pythonpath_module_cannot_patch_the_judge(tmp_path: Path) -> None:
    planted = plant(tmp_path / "hooks")
    assert_unreached(planted, tmp_path, clean_env(PYTHONPATH="hooks"))


def test_dot_pythonpath_module_cannot_patch_the_judge(tmp_path: Path) -> None:
    planted = plant(tmp_path)
    assert_unreached(planted, tmp_path, clean_env(PYTHONPATH="."))


def test_empty_pythonpath_entry_module_cannot_patch_the_judge(tmp_path: Path) -> None:
    # An empty entry between two separators is the working directory.
    planted = plant(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert_unreached(planted, tmp_path, clean_env(PYTHONPATH=f"{elsewhere}{os.pathsep}"
                                                  f"{os.pathsep}{elsewhere}"))


def test_trailing_slash_pythonpath_module_cannot_patch_the_judge(tmp_path: Path) -> None:
    planted = plant(tmp_path / "hooks")
    assert_unreached(planted, tmp_path, clean_env(PYTHONPATH=f"{tmp_path / 'hooks'}/"))


def test_duplicated_separator_pythonpath_module_cannot_patch_the_judge(tmp_path: Path) -> None:
    planted = plant(tmp_path / "hooks")
    assert_unreached(planted, tmp_path, clean_env(PYTHONPATH=f"{tmp_path}//hooks"))


def test_symlinked_pythonpath_module_cannot_patch_the_judge(tmp_path: Path) -> None:
    # Named relatively: the kit process's path holds the link's absolute name, not the real one.
    planted = plant(tmp_path / "hooks")
    (tmp_path / "link").symlink_to(tmp_path / "hooks", target_is_directory=True)
    assert_unreached(planted, tmp_path, clean_env(PYTHONPATH="link"))


def test_non_normalised_pythonpath_module_cannot_patch_the_judge(tmp_path: Path) -> None:
    planted = plant(tmp_path / "hooks")
    (tmp_path / "elsewhere").mkdir()
    assert_unreached(planted, tmp_path,
                     clean_env(PYTHONPATH=f"{tmp_path}/./elsewhere/../hooks"))


def test_tilde_pythonpath_module_cannot_patch_the_judge(tmp_path: Path) -> None:
    # Python expands no ``~``: the entry is a directory named ``~`` in the working directory.
    plant(tmp_path / "home" / "hooks")
    planted = plant(tmp_path / "~" / "hooks")
    assert_unreached(planted, tmp_path,
                     clean_env(PYTHONPATH="~/hooks", HOME=str(tmp_path / "home")))


def test_pth_added_directory_module_cannot_patch_the_judge(tmp_path: Path) -> None:
    # What a .pth file in site-packages does at start-up: ``site.addsitedir`` reads its lines,
    # relative ones against the .pth file's directory.
    planted = plant(tmp_path / "sitedir" / "hooks")
    (tmp_path / "sitedir" / "link").symlink_to(tmp_path / "sitedir" / "hooks")
    lines = ["link/", "./hooks/", "hooks", f"{tmp_path}//sitedir/../sitedir/hooks", ""]
    (tmp_path / "sitedir" / "vendor.pth").write_text("\n".join(lines), encoding="utf-8")
    prelude = f"import site; site.addsitedir({str(tmp_path / 'sitedir')!r})\n"
    assert_unreached(planted, tmp_path, clean_env(), prelude=prelude)


def test_user_site_module_cannot_patch_the_judge(tmp_path: Path) -> None:
    # The environment's base interpreter, whose user site is on (a venv turns it off): the kit
    # reaches it through a .pth file there, the planted module sits beside it.
    base = str(getattr(sys, "_base_executable", sys.executable))
    user_base = tmp_path / "user"
    user_site = subprocess.run(
        [base, "-c", "import site; print(site.getusersitepackages())"],
        env=clean_env(PYTHONUSERBASE=str(user_base)), capture_output=True, text=True,
        check=True).stdout.strip()
    planted = plant(Path(user_site))
    kit_root = Path(kit.__file__).resolve().parent.parent
    (Path(user_site) / "kit-checkout.pth").write_text(f"{kit_root}\n", encoding="utf-8")
    assert_unreached(planted, tmp_path, clean_env(PYTHONUSERBASE=str(user_base)), python=base)


def test_a_kit_whose_torch_is_outside_site_packages_is_refused_in_one_line(
    tmp_path: Path,
) -> None:
    # A venv that reaches the kit's packages through a .pth file: its judge could not import
    # torch, so the kit refuses to start one rather than fail every test.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True).stdout.strip()
    bridge = "".join(f"import site; site.addsitedir({entry!r})\n"
                     for entry in __import__("site").getsitepackages())
    (Path(purelib) / "bridge.pth").write_text(bridge, encoding="utf-8")
    done = subprocess.run(
        [str(python), "-m", "kit", "run", "--vendor", "cpu", "--tier", "unit", "--select",
         WRONG_ADD, "--no-sign", "--out", str(tmp_path / "out")],
        cwd=tmp_path, env=clean_env(XDG_CONFIG_HOME=str(tmp_path / "config")),
        capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode != 0
    (line,) = done.stderr.strip().splitlines()[-1:]
    assert line.startswith("ckit: error: judge isolation: torch is installed in "), done.stderr
    assert "outside the environment's site-packages; install" in line


#: The judge-patching module itself: torch imports ``opt_einsum`` half-initialised, so it
#: patches CPU's ``add`` (``runner_helpers.PAYLOAD``) at the next import once torch is up.
OPT_EINSUM_PAYLOAD = PAYLOAD + '''

class _OnceTorchIsUp:
    def find_spec(self, name, path=None, target=None):
        torch = sys.modules.get("torch")
        if torch is not None and not getattr(torch.__spec__, "_initializing", True):
            sys.meta_path.remove(self)
            install()
        return None

sys.meta_path.insert(0, _OnceTorchIsUp())
raise ImportError("opt_einsum: not installed")
'''


@pytest.mark.slow(seconds=60)
def test_relative_pythonpath_opt_einsum_cannot_pass_a_faulty_kernel(tmp_path: Path) -> None:
    pytest.importorskip("simnpu", reason="install the demo vendor: ckit vendors install simnpu")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "opt_einsum.py").write_text(OPT_EINSUM_PAYLOAD, encoding="utf-8")
    marker, out = tmp_path / "patched-processes.txt", tmp_path / "out"
    env = clean_env(PYTHONPATH="hooks", SIMNPU_FAULTS=json.dumps(ADD_FAULT),
                    CKIT_ATTACK_MARKER=str(marker), XDG_CONFIG_HOME=str(tmp_path / "config"),
                    CKIT_KEEP_EVIDENCE="1")  # judged again below
    done = subprocess.run(
        [sys.executable, "-m", "kit", "run", "--vendor", "simnpu", "--tier", "unit",
         "--select", WRONG_ADD, "--no-sign", "--out", str(out)],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    assert (out / "report.json").exists(), done.stderr[-2000:]
    patched = marker.read_text(encoding="utf-8").splitlines() if marker.exists() else []
    record = records_by_id(out)[WRONG_ADD]
    assert record["status"] == "FAIL_NUMERIC", (record["status"], record["message"])
    assert not any("kit.runner.judge" in line for line in patched), patched
    # Not vacuous: the judge's own code, in an ordinary interpreter with this PYTHONPATH,
    # passes the device's wrong result the run failed.
    judged = subprocess.run(
        [sys.executable, "-c", JUDGE_HERE, WRONG_ADD, str(evidence_of(out))],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    assert judged.stdout.split() == ["PASS"], judged.stderr[-2000:]
