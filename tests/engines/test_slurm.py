"""The Slurm engine against a real cluster: ``ckit slurm submit`` and ``ckit slurm status``.

The cluster is the one ``.ci/start-slurm`` starts (one node, a counted GRES ``ckitdev``); the
jobs run this checkout's ckit. The refusals that need no cluster run everywhere.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from slurm_helpers import CkitCli, ckit_cli, error_line, node_ckit

from kit.errors import ExitCode
from kit.runner.merge import layout_free

# Enough tests for every shard to hold several; each shard is a whole ckit run on 2 cores.
SELECT = "unit/opinfo/add/float32/*"
SHARDS = 2


def _submit(ckit: CkitCli, root: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """Shards sign with cpu's key under the test's config home; the merge checks them with the
    keyring beside ``root``."""
    keyring = root.parent / "keyring"
    made = ckit("keys", "generate", "--vendor", "cpu", "--keyring", str(keyring), "--if-missing")
    assert made.returncode == 0, made.stderr
    return ckit("slurm", "submit", "--vendor", "cpu", "--shards", str(SHARDS), "--root",
                str(root), "--ckit", node_ckit(), "--no-sign", "--keyring", str(keyring),
                *options)


def _report(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "report.json").read_text())  # type: ignore[no-any-return]


@pytest.mark.slurm
@pytest.mark.heavy  # sharded runs merged: three ckit runs and a merge (pyproject's markers)
def test_a_sharded_slurm_run_merges_into_the_unsharded_runs_report(
    slurm_cluster: None, ckit: CkitCli, tmp_path: Path
) -> None:
    root = tmp_path / "sharded"
    submitted = _submit(ckit, root, "--wait", "--timeout", "600",
                        "--", "--tier", "unit", "--select", SELECT)
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    assert submitted.stdout.splitlines()[-1] == f"done: merged report in {root}/merged"

    status = ckit("slurm", "status", str(root), "--json")
    assert status.returncode == 0, status.stderr
    summary = json.loads(status.stdout)
    assert [s["report"] for s in summary["shards"]] == [True] * SHARDS
    assert {s["state"] for s in summary["shards"]} == {"COMPLETED"}
    assert summary["outcome"] == "done"

    plain = ckit("run", "--vendor", "cpu", "--tier", "unit", "--select", SELECT, "--no-sign",
                 "--out", str(tmp_path / "plain"))
    # A narrowed run: never conformant; partial (12) when its tests pass.
    assert plain.returncode in (ExitCode.NOT_CONFORMANT, ExitCode.PARTIAL), plain.stderr
    merged, unsharded = _report(root / "merged"), _report(tmp_path / "plain")
    assert summary["merge"]["grade"] == unsharded["grade"]["name"]
    assert layout_free(merged) == layout_free(unsharded)
    assert (root / "merged" / "summary.md").read_text().split("\n## ")[1:] == (
        tmp_path / "plain" / "summary.md").read_text().split("\n## ")[1:]


def _cluster_gres() -> str:
    """One unit of the cluster's first GRES (``ckitdev:1`` on .ci/start-slurm's)."""
    done = subprocess.run(["sinfo", "--noheader", "--format=%G"], capture_output=True,
                          text=True, check=False)
    offered = done.stdout.split()[0] if done.stdout.split() else "(null)"
    if offered == "(null)":
        pytest.skip("the cluster offers no GRES (.ci/start-slurm's offers ckitdev:4)")
    return f"{offered.split(':')[0]}:1"


@pytest.mark.slurm
def test_the_written_scripts_hold_the_array_the_dependency_the_gres_and_the_prefix(
    slurm_cluster: None, ckit: CkitCli, tmp_path: Path
) -> None:
    root = tmp_path / "held"
    gres = _cluster_gres()
    # Held: Slurm accepts both jobs (so the merge's dependency names the real array id), and
    # nothing runs; status then sees them cancelled.
    submitted = _submit(ckit, root, "--gres", gres, "--time", "10:00", "--sbatch-line=--hold",
                        "--container-cmd", "env CKIT_IN_IMAGE=1", "--", "--tier", "unit")
    assert submitted.returncode == 0, submitted.stderr
    jobs = json.loads((root / "slurm" / "jobs.json").read_text())
    try:
        shards = (root / "slurm" / "shards.sbatch").read_text().splitlines()
        merge = (root / "slurm" / "merge.sbatch").read_text().splitlines()
        assert f"#SBATCH --array=0-{SHARDS - 1}" in shards
        assert f"#SBATCH --gres={gres}" in shards
        assert "#SBATCH --time=10:00" in shards and "#SBATCH --time=10:00" in merge
        assert f"#SBATCH --dependency=afterany:{jobs['array_job_id']}" in merge
        assert not any(line.startswith("#SBATCH --gres") for line in merge)  # merge: no device
        assert shards[-1].startswith(f"env CKIT_IN_IMAGE=1 {node_ckit()} run --vendor cpu "
                                     f'--shard "$SLURM_ARRAY_TASK_ID"/{SHARDS} ')
        assert merge[-1].startswith(f"env CKIT_IN_IMAGE=1 {node_ckit()} merge {root}/shard-0-of-")
        assert submitted.stdout.splitlines()[0] == (
            f"submitted: shard array job {jobs['array_job_id']} ({SHARDS} shards), "
            f"merge job {jobs['merge_job_id']}")
        held = ckit("slurm", "status", str(root))
        assert held.returncode == 20, held.stdout + held.stderr
        assert held.stdout.splitlines()[-1] == "in progress"
    finally:
        subprocess.run(["scancel", jobs["array_job_id"], jobs["merge_job_id"]], check=True)
    cancelled = ckit("slurm", "status", str(root), "--wait", "--timeout", "60")
    assert cancelled.returncode == 21, cancelled.stdout + cancelled.stderr
    assert cancelled.stdout.splitlines()[-1].startswith("failed: every job ended without")


@pytest.mark.slurm
def test_a_partition_that_does_not_exist_is_one_line(
    slurm_cluster: None, ckit: CkitCli, tmp_path: Path
) -> None:
    refused = _submit(ckit, tmp_path / "run", "--partition", "no-such-partition")
    assert refused.returncode == 6
    assert error_line(refused) == (
        "ckit: error: Slurm refused shards.sbatch: sbatch: error: Batch job submission failed: "
        "Invalid partition name specified")
    assert not (tmp_path / "run" / "slurm" / "jobs.json").exists()


@pytest.mark.slurm
def test_a_second_submission_into_the_same_root_is_refused(
    slurm_cluster: None, ckit: CkitCli, tmp_path: Path
) -> None:
    root = tmp_path / "run"
    first = _submit(ckit, root, "--sbatch-line=--hold")
    jobs = json.loads((root / "slurm" / "jobs.json").read_text())
    subprocess.run(["scancel", jobs["array_job_id"], jobs["merge_job_id"]], check=True)
    assert first.returncode == 0, first.stderr
    again = _submit(ckit, root)
    assert again.returncode == 3
    assert error_line(again) == (
        f"ckit: error: {root} already holds a submitted run; give a new root")


def test_a_newline_in_an_sbatch_line_cannot_add_a_script_line(
    ckit: CkitCli, tmp_path: Path
) -> None:
    refused = _submit(ckit, tmp_path / "run", "--sbatch-line", "--comment=x\ntouch /tmp/owned")
    assert refused.returncode == 3
    assert error_line(refused) == (
        "ckit: error: #SBATCH line '--comment=x\\ntouch /tmp/owned' holds a control character "
        "(a newline?)")
    assert not (tmp_path / "run" / "slurm" / "shards.sbatch").exists()


def test_a_partition_with_a_space_cannot_add_an_sbatch_option(
    ckit: CkitCli, tmp_path: Path
) -> None:
    refused = _submit(ckit, tmp_path / "run", "--partition", "gpu --uid=0")
    assert refused.returncode == 3
    assert error_line(refused) == (
        "ckit: error: partition 'gpu --uid=0' holds a space; give one Slurm value")


def test_a_forged_jobs_file_naming_a_shell_word_as_a_job_id_is_refused(
    ckit: CkitCli, tmp_path: Path
) -> None:
    (tmp_path / "run" / "slurm").mkdir(parents=True)
    forged = {"array_job_id": "1 --uid=0", "merge_job_id": "2", "shards": 1,
              "root": str(tmp_path / "run"), "submitted": "2026-01-01T00:00:00+00:00"}
    (tmp_path / "run" / "slurm" / "jobs.json").write_text(json.dumps(forged))
    refused = ckit("slurm", "status", str(tmp_path / "run"))
    assert refused.returncode == 3
    assert error_line(refused) == (
        f"ckit: error: {tmp_path}/run/slurm/jobs.json is not a jobs file this kit wrote")


def test_without_sbatch_a_submission_is_one_line(tmp_path: Path) -> None:
    no_slurm = ckit_cli(tmp_path, path=str(tmp_path / "empty-bin"))
    refused = _submit(no_slurm, tmp_path / "run")
    assert refused.returncode == 6
    assert error_line(refused) == (
        "ckit: error: sbatch not found: Slurm's client commands are not on PATH")


def test_status_of_a_root_with_no_submission_is_one_line(ckit: CkitCli, tmp_path: Path) -> None:
    refused = ckit("slurm", "status", str(tmp_path))
    assert refused.returncode == 3
    assert error_line(refused) == (
        f"ckit: error: {tmp_path}/slurm/jobs.json not found: {tmp_path} holds no Slurm "
        "submission")


@pytest.mark.slurm
def test_start_slurm_is_idempotent_where_a_node_answers(slurm_cluster: None) -> None:
    script = Path(__file__).resolve().parents[2] / ".ci" / "start-slurm"
    again = subprocess.run([str(script)], capture_output=True, text=True, timeout=120,
                           check=False)
    assert again.returncode == 0, again.stderr
    assert again.stdout == "start-slurm: a Slurm node already answers\n"
