"""``ckit template``: the GitHub Actions workflow and the Kubernetes Jobs a vendor applies.

Each template is rendered by the real CLI, read back as YAML, checked against the kit's own
schema of the format, and then for what it means: the shard indices it starts, the command
each shard's shell really runs (expanded by a real shell, the way the runner or pod does it),
and a merge that depends on the shards and joins exactly their directories.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from kit.cli import main
from kit.errors import ExitCode
from kit.report.model import Report

KIT_ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = KIT_ROOT / "kit" / "engines" / "schemas"
VENDOR = "acme"
RUN_OPTIONS = ["--tier", "unit", "--select", "unit/opinfo/add/*/*"]
GH_SHARD_EXPRESSION = "${{ matrix.shard }}"


def _schema_errors(document: Any, schema_file: str) -> list[str]:
    schema = json.loads((SCHEMAS / schema_file).read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    return [error.message for error in validator.iter_errors(document)]


def _render(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = main(["template", *args])
    captured = capsys.readouterr()
    assert code == ExitCode.OK, captured.err
    return captured.out


def _refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The one stderr line of a refused template; the exit code is an input error's."""
    code = main(["template", *args])
    captured = capsys.readouterr()
    assert code == ExitCode.INPUT_ERROR
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


def _argv(line: str, shell: str, env: dict[str, str]) -> list[str]:
    """The words ``shell`` runs for ``line``, expanded as the runner's or pod's shell does."""
    script = f'set -- {line}\nprintf "%s\\0" "$@"'
    out = subprocess.run([shell, "-c", script], env={"PATH": os.environ["PATH"], **env},
                         capture_output=True, check=True).stdout.decode()
    return out.split("\0")[:-1]


def _github_actions(capsys: pytest.CaptureFixture[str], shards: int) -> dict[str, Any]:
    text = _render(capsys, "github-actions", "--vendor", VENDOR, "--shards", str(shards),
                   "--runner-label", "acme-npu", "--", *RUN_OPTIONS)
    workflow = yaml.safe_load(text)
    assert isinstance(workflow, dict)
    return workflow


def _kubernetes_text(capsys: pytest.CaptureFixture[str], shards: int, *extra: str) -> str:
    return _render(capsys, "kubernetes", "--vendor", VENDOR, "--shards", str(shards),
                   "--image", "registry.example/acme-ckit:1", "--resource", "acme.com/npu=2",
                   "--pvc", "acme-results", "--key-secret", "acme-key", "--no-sign", *extra,
                   "--", *RUN_OPTIONS)


def _shard_argv(ckit: str, root: str, shard: int, shards: int) -> list[str]:
    return [ckit, "run", "--vendor", VENDOR, "--shard", f"{shard}/{shards}",
            "--out", f"{root}/shard-{shard}-of-{shards}", *RUN_OPTIONS]


def _shard_dirs(root: str, shards: int) -> list[str]:
    return [f"{root}/shard-{k}-of-{shards}" for k in range(shards)]


def _step(job: dict[str, Any], name: str) -> dict[str, Any]:
    steps = [step for step in job["steps"] if step.get("name") == name]
    assert len(steps) == 1, name
    return steps[0]


@pytest.mark.parametrize("shards", [1, 4])
def test_github_actions_workflow_is_valid(capsys: pytest.CaptureFixture[str], shards: int) -> None:
    workflow = _github_actions(capsys, shards)
    assert _schema_errors(workflow, "github-actions-workflow.schema.json") == []


@pytest.mark.parametrize("shards", [1, 4])
def test_github_actions_matrix_runs_each_shard_command(
    capsys: pytest.CaptureFixture[str], shards: int
) -> None:
    job = _github_actions(capsys, shards)["jobs"]["shard"]
    assert job["runs-on"] == ["self-hosted", "acme-npu"]
    assert job["strategy"]["fail-fast"] is False
    assert job["strategy"]["matrix"] == {"shard": list(range(shards))}
    run_step, upload = _step(job, "Run the shard"), _step(job, "Upload the shard")
    for shard in job["strategy"]["matrix"]["shard"]:
        # GitHub replaces the expression; the step's shell then expands the variable.
        env = {k: v.replace(GH_SHARD_EXPRESSION, str(shard)) for k, v in run_step["env"].items()}
        argv = _argv(run_step["run"], "bash", env)
        assert argv == _shard_argv(".venv/bin/ckit", "ckit-run", shard, shards)
        artifact = {k: str(v).replace(GH_SHARD_EXPRESSION, str(shard))
                    for k, v in upload["with"].items()}
        assert artifact["name"] == f"shard-{shard}-of-{shards}"
        assert artifact["path"] == f"ckit-run/shard-{shard}-of-{shards}"
    assert upload["if"] == "always()"


@pytest.mark.parametrize("shards", [1, 4])
def test_github_actions_merge_joins_every_shard(
    capsys: pytest.CaptureFixture[str], shards: int
) -> None:
    merge = _github_actions(capsys, shards)["jobs"]["merge"]
    assert merge["needs"] == "shard"
    # Runs when a shard failed too, so that the merge names that shard.
    assert merge["if"] == "always()"
    download = _step(merge, "Download the shards")["with"]
    names = [f"shard-{k}-of-{shards}" for k in range(shards)]
    assert all(fnmatch.fnmatchcase(name, download["pattern"]) for name in names)
    assert not fnmatch.fnmatchcase(f"shard-0-of-{shards + 1}", download["pattern"])
    assert download["path"] == "ckit-run"
    argv = _argv(_step(merge, "Merge the shards")["run"], "bash", {})
    # Signed by default: the merge runs where the vendor's key is.
    assert argv == [".venv/bin/ckit", "merge", *_shard_dirs("ckit-run", shards),
                    "--out", "ckit-run/merged"]
    assert _step(merge, "Upload the merged report")["with"]["path"] == "ckit-run/merged"


@pytest.mark.parametrize("shards", [1, 4])
def test_kubernetes_jobs_are_valid(capsys: pytest.CaptureFixture[str], shards: int) -> None:
    documents = list(yaml.safe_load_all(_kubernetes_text(capsys, shards)))
    assert [d["kind"] for d in documents] == ["Job", "Job"]
    for document in documents:
        assert _schema_errors(document, "kubernetes-job.schema.json") == []


@pytest.mark.parametrize("shards", [1, 4])
def test_kubernetes_indexed_job_runs_each_shard_command(
    capsys: pytest.CaptureFixture[str], shards: int
) -> None:
    job = next(yaml.safe_load_all(_kubernetes_text(capsys, shards)))
    spec = job["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == (
        "Indexed", shards, shards)
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    (container,) = pod["containers"]
    assert container["resources"]["limits"] == {"acme.com/npu": "2"}
    assert container["resources"]["requests"] == container["resources"]["limits"]
    shell, dash_c, line = container["command"]
    for index in range(shards):  # Kubernetes gives an Indexed Job's pods exactly 0..N-1
        argv = _argv(line, shell, {"JOB_COMPLETION_INDEX": str(index)})
        assert argv == _shard_argv("ckit", "/ckit", index, shards)
    key_mount = {"name": "ckit-signing-key", "mountPath": "/var/run/ckit-key", "readOnly": True}
    assert container["volumeMounts"] == [{"name": "ckit-root", "mountPath": "/ckit"}, key_mount]
    assert container["env"] == [
        {"name": "CKIT_SIGNING_KEY", "value": f"/var/run/ckit-key/{VENDOR}.pem"}]
    assert pod["volumes"] == [
        {"name": "ckit-root", "persistentVolumeClaim": {"claimName": "acme-results"}},
        {"name": "ckit-signing-key", "secret": {"secretName": "acme-key"}}]


@pytest.mark.parametrize("shards", [1, 4])
def test_kubernetes_merge_job_joins_every_shard_after_the_indexed_job(
    capsys: pytest.CaptureFixture[str], shards: int
) -> None:
    text = _kubernetes_text(capsys, shards, "--name", "acme-conformance")
    shard_job, merge_job = yaml.safe_load_all(text)
    pod = merge_job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["command"] == ["ckit", "merge", *_shard_dirs("/ckit", shards),
                                    "--out", "/ckit/merged", "--no-sign"]
    assert pod["volumes"] == shard_job["spec"]["template"]["spec"]["volumes"]
    assert container["volumeMounts"][0] == {"name": "ckit-root", "mountPath": "/ckit"}
    # Kubernetes has no dependency between Jobs: the header orders them, by label.
    header = [line.removeprefix("#").strip() for line in text.splitlines()
              if line.startswith("#")]
    commands = [line for line in header if line.startswith("kubectl ")]
    component = "app.kubernetes.io/component"
    assert commands == [
        f"kubectl apply -f FILE -l {component}={shard_job['metadata']['labels'][component]}",
        "kubectl wait --for=condition=complete job/acme-conformance --timeout=24h",
        f"kubectl apply -f FILE -l {component}={merge_job['metadata']['labels'][component]}",
    ]
    assert shard_job["metadata"]["name"] == "acme-conformance"
    assert merge_job["metadata"]["labels"][component] != shard_job["metadata"]["labels"][component]


def test_kubernetes_merge_signs_with_the_key_secret(capsys: pytest.CaptureFixture[str]) -> None:
    text = _render(capsys, "kubernetes", "--vendor", VENDOR, "--shards", "2", "--image", "r/a:1",
                   "--key-secret", "acme-signing-key")
    merge_job = list(yaml.safe_load_all(text))[1]
    assert _schema_errors(merge_job, "kubernetes-job.schema.json") == []
    pod = merge_job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert "--no-sign" not in container["command"]
    key_path = container["env"][0]["value"]
    assert container["env"] == [{"name": "CKIT_SIGNING_KEY", "value": key_path}]
    mount = next(m for m in container["volumeMounts"] if key_path.startswith(m["mountPath"]))
    assert key_path == f"{mount['mountPath']}/{VENDOR}.pem" and mount["readOnly"] is True
    volume = next(v for v in pod["volumes"] if v["name"] == mount["name"])
    assert volume["secret"] == {"secretName": "acme-signing-key"}


def test_templates_are_deterministic(capsys: pytest.CaptureFixture[str]) -> None:
    assert _kubernetes_text(capsys, 3) == _kubernetes_text(capsys, 3)
    args = ("github-actions", "--vendor", VENDOR, "--shards", "3")
    assert _render(capsys, *args) == _render(capsys, *args)


def test_out_writes_a_new_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "workflow.yml"
    args = ("github-actions", "--vendor", VENDOR, "--shards", "2")
    _render(capsys, *args, "--out", str(out))
    assert out.read_text(encoding="utf-8") == _render(capsys, *args)


# The schemas are worth checking against only if they refuse what a runner or API server does.
def test_schemas_refuse_what_a_runner_or_api_server_refuses(
    capsys: pytest.CaptureFixture[str],
) -> None:
    workflow = _github_actions(capsys, 2)
    job = workflow["jobs"]["shard"]
    documents = list(yaml.safe_load_all(_kubernetes_text(capsys, 2)))
    broken_workflows = [
        {k: v for k, v in workflow.items() if k != "on"},
        {**workflow, "jobs": {"shard": {k: v for k, v in job.items() if k != "runs-on"}}},
        {**workflow, "jobs": {"shard": {**job, "steps": [{"uses": "x@v1", "run": "true"}]}}},
        {**workflow, "jobs": {"shard": {**job, "steps": [{"name": "does nothing"}]}}},
        {**workflow, "jobs": {"shard": {**job, "needs": ["not a job id"]}}},
        {**workflow, "jobs": {"shard": {**job, "strategy": {"matrix": {"shard": []}}}}},
        {**workflow, "jobs": {"shard": {**job, "if": 1}}},
    ]
    for broken in broken_workflows:
        assert _schema_errors(broken, "github-actions-workflow.schema.json"), broken
    shard_job = documents[0]
    pod = shard_job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    broken_jobs = [
        {**shard_job, "metadata": {"name": "Acme_Job"}},
        {**shard_job, "apiVersion": "v1"},
        _with_pod(shard_job, {**pod, "restartPolicy": "Always"}),
        _with_pod(shard_job, {**pod, "containers": [{**container, "resources": {
            "limits": {"acme.com/npu": "two"}}}]}),
        _with_pod(shard_job, {**pod, "containers": [{k: v for k, v in container.items()
                                                     if k != "image"}]}),
        _with_pod(shard_job, {**pod, "volumes": [{"name": "ckit-root"}]}),
        {**shard_job, "spec": {**shard_job["spec"], "completionMode": "indexed"}},
    ]
    for broken in broken_jobs:
        assert _schema_errors(broken, "kubernetes-job.schema.json"), broken


def _with_pod(job: dict[str, Any], pod: dict[str, Any]) -> dict[str, Any]:
    template = {**job["spec"]["template"], "spec": pod}
    return {**job, "spec": {**job["spec"], "template": template}}


def test_resource_name_that_is_not_an_extended_resource_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = _refused(capsys, "kubernetes", "--vendor", VENDOR, "--shards", "2", "--image", "r/a:1",
                    "--no-sign", "--resource", "gpu=1")
    assert line == ("ckit: error: --resource: 'gpu' is not a device-plugin (extended) resource "
                    "name: expected DOMAIN/NAME outside kubernetes.io, such as nvidia.com/gpu")


def test_resource_in_the_kubernetes_io_domain_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = _refused(capsys, "kubernetes", "--vendor", VENDOR, "--shards", "2", "--image", "r/a:1",
                    "--no-sign", "--resource", "kubernetes.io/npu=1")
    assert line.startswith("ckit: error: --resource: 'kubernetes.io/npu' is not a device-plugin")


def test_fractional_device_count_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    line = _refused(capsys, "kubernetes", "--vendor", VENDOR, "--shards", "2", "--image", "r/a:1",
                    "--no-sign", "--resource", "acme.com/npu=0.5")
    assert line == ("ckit: error: --resource: the count of acme.com/npu must be a whole number "
                    "of devices, at least 1 (NAME=COUNT), got '0.5'")


#: What each engine needs besides the vendor and the shard count.
ENGINE_ARGS = {
    "github-actions": ("github-actions",),
    "kubernetes": ("kubernetes", "--image", "r/a:1", "--no-sign"),
}


@pytest.mark.parametrize("engine", sorted(ENGINE_ARGS))
def test_zero_shards_is_refused(capsys: pytest.CaptureFixture[str], engine: str) -> None:
    line = _refused(capsys, *ENGINE_ARGS[engine], "--vendor", VENDOR, "--shards", "0")
    assert line == "ckit: error: --shards: a run has at least 1 shard, got 0"


def test_job_name_that_is_not_dns_1123_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    line = _refused(capsys, "kubernetes", "--vendor", VENDOR, "--shards", "2", "--image", "r/a:1",
                    "--no-sign", "--name", "Acme_Conformance")
    assert line == ("ckit: error: --name: 'Acme_Conformance' is not a Kubernetes job name "
                    "(lower-case letters, digits and '-', starting and ending with a letter or "
                    "digit, at most 52 characters)")


def test_job_name_too_long_for_the_pod_labels_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = _refused(capsys, "kubernetes", "--vendor", VENDOR, "--shards", "2", "--image", "r/a:1",
                    "--no-sign", "--name", "a" * 53)
    assert line.startswith(f"ckit: error: --name: '{'a' * 53}' is not a Kubernetes job name")


def test_run_option_redirecting_the_shard_output_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = _refused(capsys, "github-actions", "--vendor", VENDOR, "--shards", "2", "--",
                    "--tier", "unit", "--out=/elsewhere")
    assert line == ("ckit: error: extra ckit run option --out: the template sets it for every "
                    "shard; leave it out")


def test_matrix_beyond_what_github_runs_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    line = _refused(capsys, "github-actions", "--vendor", VENDOR, "--shards", "257")
    assert line == "ckit: error: --shards: a GitHub Actions matrix runs at most 256 jobs, got 257"


def test_kubernetes_without_a_key_for_the_shards_to_sign_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = _refused(capsys, "kubernetes", "--vendor", VENDOR, "--shards", "2", "--image", "r/a:1",
                    "--no-sign")
    assert line == ("ckit: error: each shard signs its report in its pod (the merge takes only "
                    f"signed shards): give --key-secret NAME (a Secret holding {VENDOR}.pem)")


def test_existing_out_file_is_never_overwritten(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "workflow.yml"
    out.write_text("the vendor's own workflow\n", encoding="utf-8")
    line = _refused(capsys, "github-actions", "--vendor", VENDOR, "--shards", "2",
                    "--out", str(out))
    assert line == f"ckit: error: --out: {out} exists; a template never overwrites a file"
    assert out.read_text(encoding="utf-8") == "the vendor's own workflow\n"


def test_rendered_kubernetes_commands_really_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The pod's shard command and the merge Job's command, run here as the pod would run them
    (``ckit`` replaced by this checkout's kit), for one tiny test."""
    root = tmp_path / "root"
    root.mkdir()
    text = _render(capsys, "kubernetes", "--vendor", "cpu", "--shards", "1", "--image", "r/a:1",
                   "--key-secret", "cpu-key", "--no-sign", "--root", str(root), "--",
                   "--tier", "unit", "--select", "unit/opinfo/add/float32/0")
    shard_job, merge_job = yaml.safe_load_all(text)
    shell, dash_c, line = shard_job["spec"]["template"]["spec"]["containers"][0]["command"]
    assert line.startswith("ckit ")
    kit = f"{shlex.quote(sys.executable)} -m kit"
    env = {**os.environ, "JOB_COMPLETION_INDEX": "0", "PYTHONPATH": str(KIT_ROOT),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    env.pop("CKIT_SIGNING_KEY", None)  # the Secret's mount path: here, the default key
    keyring = tmp_path / "keyring"
    made = subprocess.run([sys.executable, "-m", "kit", "keys", "generate", "--vendor", "cpu",
                           "--keyring", str(keyring)], cwd=KIT_ROOT, env=env,
                          capture_output=True, text=True, check=False)
    assert made.returncode == 0, made.stderr
    shard = subprocess.run([shell, dash_c, kit + line.removeprefix("ckit")], cwd=KIT_ROOT,
                           env=env, capture_output=True, text=True, timeout=600, check=False)
    assert shard.returncode == 0, shard.stderr
    report = json.loads((root / "shard-0-of-1" / "report.json").read_text(encoding="utf-8"))
    assert (report["run"]["shard"]["index"], report["run"]["shard"]["count"]) == (0, 1)
    merge_argv = merge_job["spec"]["template"]["spec"]["containers"][0]["command"]
    assert merge_argv[0] == "ckit"
    merge = subprocess.run([sys.executable, "-m", "kit", *merge_argv[1:], "--keyring",
                            str(keyring)], cwd=KIT_ROOT,
                           env=env, capture_output=True, text=True, timeout=600, check=False)
    # The merge grades the run: one test of the standard is not a conformant run, but a partial
    # one whose test passes.
    assert merge.returncode == ExitCode.PARTIAL, merge.stderr
    merged = Report.from_json(
        json.loads((root / "merged" / "report.json").read_text(encoding="utf-8")))
    assert [record.id for record in merged.records] == ["unit/opinfo/add/float32/0"]


def _audit_workflow(tmp_path: Path) -> dict[str, Any]:
    """The workflow ``ckit repo init`` writes into a new repository, as GitHub reads it."""
    code = main(["repo", "init", str(tmp_path / "repo"), "--root-key", str(tmp_path / "root.pem"),
                 "--kit-repository", "example/ckit"])
    assert code == ExitCode.OK
    text = (tmp_path / "repo" / ".github" / "workflows" / "ckit.yml").read_text(encoding="utf-8")
    workflow = yaml.safe_load(text)
    assert isinstance(workflow, dict)
    return workflow


def test_repository_workflow_audits_pull_requests_under_the_base_branchs_choices(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workflow = _audit_workflow(tmp_path)
    assert _schema_errors(workflow, "github-actions-workflow.schema.json") == []
    assert set(workflow["on"]) == {"pull_request_target", "push"}
    audit = workflow["jobs"]["audit"]
    assert audit["permissions"] == {"contents": "read", "pull-requests": "write",
                                    "issues": "write"}
    base = _step(audit, "Check out the base branch")["with"]
    assert base["ref"] == "${{ github.event.pull_request.base.sha }}"
    pull = _step(audit, "Check out the pull request")["with"]
    assert pull["fetch-depth"] == 0 and pull["persist-credentials"] is False
    audit_line = _step(audit, "Audit the submissions it changes")["run"].splitlines()[1]
    assert shlex.split(audit_line) == [
        "ckit-src/.venv/bin/ckit", "audit", "pull", "--changed-since", "$BASE_SHA",
        "--repo-config", f"{base['path']}/ckit", ">", "audit.txt"]
    answer = _step(audit, "Answer with a comment and a label")["run"]
    assert "gh pr comment" in answer and "--add-label" in answer
    portal = workflow["jobs"]["portal"]
    assert _step(portal, "Build the portal")["run"] == (
        "ckit-src/.venv/bin/ckit portal . --repo-config ckit -o site")
    broken = {**workflow, "jobs": {"audit": {**audit, "permissions": {"contents": "admin"}}}}
    assert _schema_errors(broken, "github-actions-workflow.schema.json")
