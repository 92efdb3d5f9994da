"""Issue 24's probe on the engines: what a ``ckit run`` option or a root could smuggle into a
template or a Slurm script, and a shard count no engine can start. Each is refused with one
line, or escaped so the node runs exactly what was given."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml
from slurm_helpers import ckit_cli, error_line

from kit.cli import main
from kit.errors import ExitCode

SELECT_KUBE_VARIABLE = "unit/$(HOME)/$$(X)/*"


def _refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["template", *args]) == ExitCode.INPUT_ERROR
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    return line


def _kube_expanded(word: str, env: dict[str, str]) -> str:
    """What Kubernetes makes of a container command word: ``$$`` is ``$``, a ``$(VAR)`` of the
    container's environment is its value, any other ``$`` stays (its expansion rules)."""
    out, i = [], 0
    while i < len(word):
        if word.startswith("$$", i):
            out.append("$")
            i += 2
        elif word.startswith("$(", i) and ")" in word[i:]:
            end = word.index(")", i)
            name = word[i + 2:end]
            out.append(env.get(name, word[i:end + 1]))
            i = end + 1
        else:
            out.append(word[i])
            i += 1
    return "".join(out)


def test_select_with_github_expression_is_refused_in_the_workflow(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = _refused(capsys, "github-actions", "--vendor", "acme", "--shards", "2", "--",
                    "--select", "unit/${{ secrets.VENDOR_TOKEN }}/*")
    assert line == ("ckit: error: 'unit/${{ secrets.VENDOR_TOKEN }}/*' holds '${{': GitHub "
                    "Actions would evaluate it as an expression in the workflow; leave it out")


def test_select_with_kubernetes_variable_is_escaped_in_the_jobs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["template", "kubernetes", "--vendor", "acme", "--shards", "2", "--image",
                 "r/a:1", "--pvc", "p", "--key-secret", "k", "--", "--select",
                 SELECT_KUBE_VARIABLE]) == ExitCode.OK
    shard_job, merge_job = yaml.safe_load_all(capsys.readouterr().out)
    shell, dash_c, line = shard_job["spec"]["template"]["spec"]["containers"][0]["command"]
    pod_env = {"HOME": "/root", "X": "x", "JOB_COMPLETION_INDEX": "1"}
    script = f'set -- {_kube_expanded(line, pod_env)}\nprintf "%s\\0" "$@"'
    argv = subprocess.run([shell, dash_c, script], env={"PATH": os.environ["PATH"], **pod_env},
                          capture_output=True, check=True).stdout.decode().split("\0")[:-1]
    assert argv[argv.index("--select") + 1] == SELECT_KUBE_VARIABLE
    assert argv[argv.index("--shard") + 1] == "1/2"  # the shell's own variable still expands
    merge = merge_job["spec"]["template"]["spec"]["containers"][0]["command"]
    assert [_kube_expanded(word, pod_env) for word in merge] == merge  # nothing to expand


def test_a_billion_kubernetes_shards_are_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = _refused(capsys, "kubernetes", "--vendor", "acme", "--shards", "1000000000",
                    "--image", "r/a:1", "--pvc", "p", "--key-secret", "k")
    assert line == "ckit: error: --shards: a run has at most 4096 shards, got 1000000000"


def test_slurm_root_with_a_space_cannot_break_an_sbatch_line(tmp_path: Path) -> None:
    root = tmp_path / "lab runs"
    refused = ckit_cli(tmp_path)("slurm", "submit", "--vendor", "cpu", "--shards", "2",
                                 "--root", str(root), "--no-sign")
    assert refused.returncode == ExitCode.INPUT_ERROR
    assert error_line(refused) == (
        f"ckit: error: root {str(root)!r} holds a space; give one Slurm value")
    assert not (root / "slurm" / "shards.sbatch").exists()
