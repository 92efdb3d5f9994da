"""``ckit template github-canary|kubernetes-cronjob|slurm-scrontab``: the two canary CI modes.

Each template is rendered by the real CLI, checked against the kit's schema of its format, and
its scripts run in a real shell with stand-ins for pip's interpreter, ckit and gh, which record
what they were asked to do: the torch installed, the canary run, the comment against the
baseline, and the job's verdict from the run's exit status.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from canary_stubs import github_canary, make_stubs, render, step

from kit.engines.canary import NIGHTLY_INDEX, clean_exit_codes
from kit.engines.kubernetes_cronjob import as_job

SCHEMAS = Path(__file__).resolve().parents[2] / "kit" / "engines" / "schemas"
PIP = ["python", "-m", "pip", "install", "--pre", "--upgrade"]


def _schema_errors(document: Any, schema_file: str) -> list[str]:
    schema = json.loads((SCHEMAS / schema_file).read_text(encoding="utf-8"))
    return [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(document)]


def test_github_canary_runs_on_dispatch_and_nightly_and_answers_the_pull_request(
    capsys: pytest.CaptureFixture[str],
) -> None:
    workflow = github_canary(capsys, "--cron", "30 2 * * *", "--", "--tier", "unit")
    assert _schema_errors(workflow, "github-actions-workflow.schema.json") == []
    assert workflow["on"] == {"repository_dispatch": {"types": ["torch-canary"]},
                              "schedule": [{"cron": "30 2 * * *"}]}
    job = workflow["jobs"]["canary"]
    assert job["runs-on"] == ["self-hosted", "acme-npu"]
    assert job["permissions"] == {"contents": "read"}
    install = step(workflow, "Install the torch under test")
    assert install["env"]["TORCH"] == "${{ github.event.client_payload.torch }}"
    post = step(workflow, "Comment on the upstream pull request")
    assert post["if"] == "always() && github.event_name == 'repository_dispatch'"
    assert post["env"]["GH_TOKEN"] == "${{ secrets.CKIT_UPSTREAM_TOKEN }}"
    assert (post["env"]["PR"], post["env"]["UPSTREAM"]) == (
        "${{ github.event.client_payload.pr }}", "${{ github.event.client_payload.repo }}")
    assert step(workflow, "Upload the run")["with"]["path"] == "ckit-canary"
    verdict = step(workflow, "Fail unless the canary's tests were fine")["if"]
    assert all(f"!= '{code}'" in verdict for code in clean_exit_codes())


def test_github_canary_steps_install_run_comment_and_post(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    workflow = github_canary(capsys, "--", "--tier", "unit")
    stubs = make_stubs(tmp_path / ".venv" / "bin")  # gh too, on PATH
    env = {"TORCH": "2.8.0.dev20250601+cpu", "TORCH_INDEX": NIGHTLY_INDEX,
           "GITHUB_OUTPUT": str(tmp_path / "output"), "STUB_RUN_EXIT": "11",
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "RUN_URL": "https://run/1",
           "PR": "12345", "UPSTREAM": "pytorch/pytorch", "ALLOWED_UPSTREAM": "pytorch/pytorch"}
    for name in ("Install the torch under test", "Run the canary", "Write the comment"):
        done = stubs.run(["bash", "-c", step(workflow, name)["run"]], env, tmp_path)
        assert done.returncode == 0, (name, done.stderr)
    post = step(workflow, "Comment on the upstream pull request")
    done = stubs.run(["bash", "-c", post["run"]], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert stubs.calls() == [
        [*PIP, "torch==2.8.0.dev20250601+cpu", "--index-url", NIGHTLY_INDEX],
        ["ckit", "run", "--vendor", "acme", "--canary", "--out", "ckit-canary", "--no-sign",
         "--tier", "unit"],
        ["ckit", "show", "ckit-canary", "--format", "comment", "--against", "/srv/acme-cert"],
        ["gh", "pr", "comment", "12345", "--repo", "pytorch/pytorch", "--body-file",
         "ckit-canary/comment.md"],
    ]
    assert (tmp_path / "output").read_text(encoding="utf-8") == "status=11\n"
    comment = (tmp_path / "ckit-canary" / "comment.md").read_text(encoding="utf-8")
    assert comment == "### ckit canary run\n\nThe run: https://run/1\n"
    assert (tmp_path / "summary.md").read_text(encoding="utf-8") == comment


def test_nightly_github_canary_installs_the_newest_torch_on_the_index(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    script = step(github_canary(capsys), "Install the torch under test")["run"]
    stubs = make_stubs(tmp_path / ".venv" / "bin")
    # On a schedule the payload expression is empty.
    done = stubs.run(["bash", "-c", script], {"TORCH": "", "TORCH_INDEX": NIGHTLY_INDEX},
                     tmp_path)
    assert done.returncode == 0, done.stderr
    assert stubs.calls() == [[*PIP, "torch", "--index-url", NIGHTLY_INDEX]]


def _pod_script(text: str) -> str:
    """The CronJob's pod script as its shell gets it (Kubernetes reduces ``$$`` to ``$``)."""
    (cronjob,) = yaml.safe_load_all(text)
    shell, dash_c, script = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"][
        "containers"][0]["command"]
    assert (shell, dash_c) == ("sh", "-c")
    return str(script).replace("$$", "$")


@pytest.mark.parametrize(("run_exit", "pod_exit"), [(11, 0), (1, 1)])
def test_kubernetes_cronjob_runs_the_nightly_canary_on_the_claim(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, run_exit: int, pod_exit: int,
) -> None:
    root = tmp_path / "claim"
    text = render(capsys, "kubernetes-cronjob", "--vendor", "acme", "--image", "r/a:1",
                  "--resource", "acme.com/npu=1", "--root", str(root),
                  "--baseline", "/ckit/acme-cert", "--", "--tier", "unit")
    (cronjob,) = yaml.safe_load_all(text)
    assert _schema_errors(cronjob, "kubernetes-cronjob.schema.json") == []
    assert _schema_errors(as_job(cronjob), "kubernetes-job.schema.json") == []
    assert (cronjob["spec"]["schedule"], cronjob["spec"]["concurrencyPolicy"]) == (
        "0 3 * * *", "Forbid")
    stubs = make_stubs(tmp_path / "bin")
    done = stubs.run(["sh", "-c", _pod_script(text)], {"STUB_RUN_EXIT": str(run_exit)}, tmp_path)
    assert done.returncode == pod_exit, done.stderr
    (out,) = root.iterdir()  # canary-<UTC time>
    assert out.name.startswith("canary-") and out.name.endswith("Z")
    assert stubs.calls() == [
        [*PIP, "torch", "--index-url", NIGHTLY_INDEX],
        ["ckit", "run", "--vendor", "acme", "--canary", "--out", str(out), "--no-sign",
         "--tier", "unit"],
        ["ckit", "show", str(out), "--format", "comment", "--against", "/ckit/acme-cert"],
    ]
    assert (out / "comment.md").read_text(encoding="utf-8") == "### ckit canary run\n"


def test_slurm_scrontab_entry_runs_the_nightly_canary_as_a_job(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    root = tmp_path / "shared"
    text = render(capsys, "slurm-scrontab", "--vendor", "acme", "--root", str(root),
                  "--baseline", "/shared/acme-cert", "--partition", "gpu", "--gres", "gpu:1",
                  "--time", "4:00:00", "--sbatch-line=--account=lab", "--no-sign")
    lines = [line for line in text.splitlines() if not line.startswith("# ")]
    assert lines[:-1] == [
        "#SCRON --job-name=ckit-canary-acme", f"#SCRON --output={root}/slurm/canary-%j.out",
        "#SCRON --partition=gpu", "#SCRON --gres=gpu:1", "#SCRON --time=4:00:00",
        "#SCRON --account=lab"]
    minute, hour, day, month, weekday, command = lines[-1].split(" ", 5)
    assert (minute, hour, day, month, weekday) == ("0", "3", "*", "*", "*")
    assert "%" not in command  # cron would cut the command there
    stubs = make_stubs(tmp_path / "bin")
    # Slurm runs the entry's command as the batch job's script.
    done = stubs.run(["sh", "-c", command], {"SLURM_JOB_ID": "4242", "STUB_RUN_EXIT": "11"},
                     tmp_path)
    assert done.returncode == 0, done.stderr
    out = f"{root}/canary-4242"
    assert stubs.calls() == [
        [*PIP, "torch", "--index-url", NIGHTLY_INDEX],
        ["ckit", "run", "--vendor", "acme", "--canary", "--out", out, "--no-sign"],
        ["ckit", "show", out, "--format", "comment", "--against", "/shared/acme-cert"],
    ]


def test_canary_templates_are_deterministic(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("slurm-scrontab", "--vendor", "acme", "--root", "/s", "--baseline", "/s/c")
    assert render(capsys, *args) == render(capsys, *args)
    assert github_canary(capsys) == github_canary(capsys)


# The schemas' new parts are worth checking against only if they refuse what GitHub or the API
# server refuses.
def test_canary_schemas_refuse_a_broken_schedule_dispatch_or_cronjob(
    capsys: pytest.CaptureFixture[str],
) -> None:
    workflow = github_canary(capsys)
    for on in ({"schedule": [{"cron": "nightly"}]}, {"schedule": []},
               {"repository_dispatch": {"type": ["torch-canary"]}},
               {"repository_dispatch": {"types": []}}):
        assert _schema_errors({**workflow, "on": on}, "github-actions-workflow.schema.json"), on
    (cronjob,) = yaml.safe_load_all(render(
        capsys, "kubernetes-cronjob", "--vendor", "acme", "--image", "r/a:1", "--no-sign",
        "--baseline", "/ckit/c"))
    spec = cronjob["spec"]
    for broken in ({**cronjob, "kind": "Job"},
                   {**cronjob, "metadata": {"name": "a" * 53}},
                   {**cronjob, "spec": {**spec, "schedule": "nightly"}},
                   {**cronjob, "spec": {**spec, "concurrencyPolicy": "forbid"}},
                   {**cronjob, "spec": {k: v for k, v in spec.items() if k != "jobTemplate"}}):
        assert _schema_errors(broken, "kubernetes-cronjob.schema.json"), broken
