"""What an upstream dispatch or a template option could smuggle into a canary template.

The dispatch's ``client_payload`` is anyone's text who can dispatch: it must never become part
of a script (GitHub expands ``${{ }}`` in a ``run:`` before the shell reads it), only a quoted
word after its shape was checked, and never printed (a runner reads ``::`` lines as commands).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from canary_stubs import Stubs, github_canary, make_stubs, refused, render, step
from test_engine_attacks import _kube_expanded

from kit.engines.canary import NIGHTLY_INDEX

PAYLOAD = "github.event.client_payload"
SHELL_PAYLOADS = [
    "2.8.0; touch PWNED",
    "$(touch PWNED)",
    "`touch PWNED`",
    "2.8.0\ntouch PWNED",
    "2.8.0 --index-url https://evil.example/simple",
    "::add-mask::x",
]


def _run_steps(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in workflow["jobs"]["canary"]["steps"] if "run" in s]


def _install(workflow: dict[str, Any], stubs: Stubs, torch: str, cwd: Path) -> tuple[int, str]:
    script = step(workflow, "Install the torch under test")["run"]
    done = stubs.run(["bash", "-c", script], {"TORCH": torch, "TORCH_INDEX": NIGHTLY_INDEX}, cwd)
    return done.returncode, done.stderr


def test_dispatch_payload_with_shell_metacharacters_never_reaches_a_run_script(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    workflow = github_canary(capsys)
    for run_step in _run_steps(workflow):
        # Every expression (payload, secret, step output) reaches a script as a variable only.
        assert "${{" not in run_step["run"], run_step["name"]
    payload_env = [value for s in _run_steps(workflow) for value in s.get("env", {}).values()
                   if PAYLOAD in value]
    assert sorted(payload_env) == sorted(f"${{{{ {PAYLOAD}.{field} }}}}"
                                         for field in ("torch", "pr", "repo"))
    stubs = make_stubs(tmp_path / ".venv" / "bin")
    for torch in SHELL_PAYLOADS:
        code, stderr = _install(workflow, stubs, torch, tmp_path)
        assert code == 1, torch
        assert torch not in stderr  # never echoed: no workflow command, no log injection
    assert stubs.calls() == []  # pip never ran
    assert not (tmp_path / "PWNED").exists()


def test_dispatched_version_and_wheel_url_reach_pip_as_one_word(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    workflow = github_canary(capsys)
    stubs = make_stubs(tmp_path / ".venv" / "bin")
    wheel = ("https://download.pytorch.org/whl/nightly/cpu/"
             "torch-2.8.0.dev20250601%2Bcpu-cp311-cp311-manylinux_2_28_x86_64.whl")
    for torch in ("2.8.0rc1", wheel):
        assert _install(workflow, stubs, torch, tmp_path)[0] == 0
    pip = ["python", "-m", "pip", "install", "--pre", "--upgrade"]
    assert stubs.calls() == [[*pip, "torch==2.8.0rc1", "--index-url", NIGHTLY_INDEX],
                             [*pip, wheel]]


def test_dispatched_wheel_url_on_another_host_is_refused_in_the_job(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    workflow = github_canary(capsys)
    stubs = make_stubs(tmp_path / ".venv" / "bin")
    for url in ("https://evil.example/torch-2.8.0-cp311-none-any.whl",
                "https://download.pytorch.org@evil.example/torch.whl",
                "https://download.pytorch.org.evil.example/torch.whl",
                "http://download.pytorch.org/whl/torch.whl",
                "https://download.pytorch.org/whl/torch.whl?x=.whl"):
        assert _install(workflow, stubs, url, tmp_path)[0] == 1, url
    assert stubs.calls() == []


@pytest.mark.parametrize(("pr", "repo"), [
    ("12345", "evil/pytorch"),
    ("12345 --repo evil/pytorch", "pytorch/pytorch"),
    ("$(touch PWNED)", "pytorch/pytorch"),
    ("12345", "pytorch/pytorch\ntouch PWNED"),
])
def test_dispatch_naming_another_pull_request_target_gets_no_comment(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pr: str, repo: str,
) -> None:
    post = step(github_canary(capsys), "Comment on the upstream pull request")
    stubs = make_stubs(tmp_path / "bin", ("gh",))
    env = {"ALLOWED_UPSTREAM": post["env"]["ALLOWED_UPSTREAM"], "PR": pr, "UPSTREAM": repo}
    done = stubs.run(["bash", "-c", post["run"]], env, tmp_path)
    assert done.returncode == 1
    assert pr not in done.stderr and repo not in done.stderr
    assert stubs.calls() == [] and not (tmp_path / "PWNED").exists()


def test_github_expression_in_the_baseline_is_refused_in_the_canary_workflow(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = refused(capsys, "github-canary", "--vendor", "acme",
                   "--baseline", "/srv/${{ secrets.CKIT_UPSTREAM_TOKEN }}")
    assert line == ("ckit: error: '/srv/${{ secrets.CKIT_UPSTREAM_TOKEN }}' holds '${{': GitHub "
                    "Actions would evaluate it as an expression in the workflow; leave it out")


def test_canary_run_option_setting_its_own_output_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = refused(capsys, "github-canary", "--vendor", "acme", "--baseline", "/srv/c", "--",
                   "--out=/elsewhere")
    assert line == ("ckit: error: extra ckit run option --out=/elsewhere: the canary template "
                    "sets it; leave it out")


def test_percent_in_a_scrontab_command_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    line = refused(capsys, "slurm-scrontab", "--vendor", "acme", "--root", "/s",
                   "--baseline", "/s/acme-100%")
    assert line == ("ckit: error: --baseline: '/s/acme-100%' holds '%', which a crontab command "
                    "line reads as a newline; leave it out")


def test_newline_in_a_scrontab_run_option_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    line = refused(capsys, "slurm-scrontab", "--vendor", "acme", "--root", "/s", "--baseline",
                   "/s/c", "--", "--select", "unit/*\n* * * * * rm -rf ~")
    assert line == ("ckit: error: ckit run option: 'unit/*\\n* * * * * rm -rf ~' holds a "
                    "control character (a newline?)")


def test_kubernetes_variable_in_the_cronjob_baseline_is_escaped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    text = render(capsys, "kubernetes-cronjob", "--vendor", "acme", "--image", "r/a:1",
                  "--no-sign", "--root", str(tmp_path / "claim"), "--baseline", "/ckit/$(HOME)")
    (cronjob,) = yaml.safe_load_all(text)
    script = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0][
        "command"][2]
    stubs = make_stubs(tmp_path / "bin")
    done = stubs.run(["sh", "-c", _kube_expanded(script, {"HOME": "/root"})],
                     {"STUB_RUN_EXIT": "11", "HOME": "/root"}, tmp_path)
    assert done.returncode == 0, done.stderr
    # ckit show got the baseline as given, not Kubernetes' expansion of $(HOME).
    assert stubs.calls()[-1][-1] == "/ckit/$(HOME)"


@pytest.mark.parametrize("kind", [
    ("github-canary",),
    ("kubernetes-cronjob", "--image", "r/a:1"),
    ("slurm-scrontab", "--root", "/s"),
])
def test_cron_carrying_a_second_entry_is_refused(
    capsys: pytest.CaptureFixture[str], kind: tuple[str, ...],
) -> None:
    line = refused(capsys, *kind, "--vendor", "acme", "--baseline", "/s/c",
                   "--cron", "0 3 * * * true\n* * * * *")
    assert line == ("ckit: error: --cron: '0 3 * * * true\\n* * * * *' is not five cron fields "
                    "(numbers, *, -, ',', /)")


def _cronjob_pod(text: str) -> dict[str, Any]:
    (cronjob,) = yaml.safe_load_all(text)
    pod: dict[str, Any] = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return pod


def test_canary_cronjob_never_mounts_the_vendor_signing_key_by_default(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    """The pod installs an untrusted nightly torch: by default it holds no key at all and its
    canary is unsigned."""
    text = render(capsys, "kubernetes-cronjob", "--vendor", "acme", "--image", "r/a:1",
                  "--root", str(tmp_path / "claim"), "--baseline", "/ckit/acme-cert")
    pod = _cronjob_pod(text)
    (container,) = pod["containers"]
    assert "env" not in container and "secret" not in text
    assert [v["name"] for v in pod["volumes"]] == ["ckit-root"]
    stubs = make_stubs(tmp_path / "bin")
    done = stubs.run(["sh", "-c", container["command"][2].replace("$$", "$")],
                     {"STUB_RUN_EXIT": "11"}, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "--no-sign" in stubs.calls()[1] and "--key" not in stubs.calls()[1]


def test_canary_cronjob_asked_for_the_vendor_key_secret_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = refused(capsys, "kubernetes-cronjob", "--vendor", "acme", "--image", "r/a:1",
                   "--key-secret", "acme-signing-key", "--baseline", "/ckit/acme-cert")
    assert line == (
        "ckit: error: kubernetes-cronjob: --key-secret would mount the vendor's signing key in a "
        "pod that installs an untrusted torch; a canary is unsigned, or signed with a separate "
        "canary key: --canary-key-secret NAME")


def test_signed_canary_cronjob_holds_only_the_separate_canary_key(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = render(capsys, "kubernetes-cronjob", "--vendor", "acme", "--image", "r/a:1",
                  "--canary-key-secret", "acme-canary-key", "--baseline", "/ckit/acme-cert")
    pod = _cronjob_pod(text)
    (container,) = pod["containers"]
    assert pod["volumes"][1] == {"name": "ckit-canary-key",
                                 "secret": {"secretName": "acme-canary-key"}}
    assert container["volumeMounts"][1]["readOnly"] is True
    assert "--key /var/run/ckit-canary-key/acme-canary.pem" in container["command"][2]
    assert "env" not in container  # no CKIT_SIGNING_KEY: the vendor's key is never named


@pytest.mark.parametrize("kind", [
    ("github-canary",),
    ("slurm-scrontab", "--root", "/s"),
])
def test_canary_workflow_and_scrontab_sign_with_nothing_by_default(
    capsys: pytest.CaptureFixture[str], kind: tuple[str, ...],
) -> None:
    """Before, the workflow's canary signed with the runner's default key: the vendor's."""
    text = render(capsys, *kind, "--vendor", "acme", "--baseline", "/s/c")
    run_lines = [line for line in text.splitlines() if "run --vendor acme --canary" in line]
    assert run_lines and all("--no-sign" in line for line in run_lines), run_lines
    signed = render(capsys, *kind, "--vendor", "acme", "--baseline", "/s/c",
                    "--canary-key", "/srv/keys/acme-canary.pem")
    assert "--key /srv/keys/acme-canary.pem" in signed and "--no-sign" not in signed


def test_kubernetes_variable_in_canary_select_is_not_expanded(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 36's leftover: ``$(VAR)`` in ``--select`` reaches the container as ``$$(VAR)``."""
    text = render(capsys, "kubernetes-cronjob", "--vendor", "acme", "--image", "r/a:1",
                  "--baseline", "/ckit/acme-cert", "--", "--select", "unit/$(HOME)/*")
    script = _cronjob_pod(text)["containers"][0]["command"][2]
    assert "--select 'unit/$$(HOME)/*'" in script
    assert _kube_expanded(script, {"HOME": "/root"}).count("$(HOME)") == 1
