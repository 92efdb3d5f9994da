"""A GitHub Actions workflow for the two canary CI modes: dispatched, and nightly.

**Event-triggered**: an upstream PyTorch pull request (or merge) sends the vendor's repository a
``repository_dispatch`` of type ``torch-canary`` whose ``client_payload`` names the torch
(``torch``: a version on the index, or a wheel URL) and the pull request (``repo``, ``pr``);
the job installs that torch, runs ``ckit run --canary`` and posts the comment back to the pull
request with ``gh``. **Periodic**: a nightly ``schedule`` runs the same job against the newest
torch on the nightly index; its comment goes to the run's summary, its run to an artifact (the
dashboard's input).

The payload is untrusted text: it reaches the job only as environment variables of the steps
that read them, never inside a ``run:`` script (GitHub's script-injection guidance), and each
value is checked for its shape in the job before anything uses it.

The job installs that untrusted torch, so it signs with no vendor key: the canary is unsigned
unless a separate canary key is named (``CanaryRun.key``, ``--canary-key PATH`` on the runner).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from kit.engines.canary import (
    INDEX_VARIABLE,
    TORCH_VARIABLE,
    CanaryRun,
    check_canary_run,
    check_cron,
    clean_exit_codes,
    torch_install_script,
)
from kit.engines.github_actions import (
    CHECKOUT,
    UPLOAD,
    refuse_bad_runner_labels,
    refuse_expressions,
)
from kit.engines.template_text import check_rendered, yaml_text
from kit.engines.workflow_types import Job, Step, Workflow
from kit.errors import InputError

SCHEMA = "github-actions-workflow.schema.json"
DISPATCH_TYPE = "torch-canary"
CANARY_JOB = "canary"
#: The run's directory in the runner's workspace, and the comment beside it.
OUT = "ckit-canary"
COMMENT = f"{OUT}/comment.md"
PAYLOAD = "github.event.client_payload"
_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_SECRET = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class GithubCanaryOptions:
    runner_labels: tuple[str, ...]
    #: Shell lines installing the kit and the vendor's stack (before the canary's torch).
    install: tuple[str, ...]
    workflow_name: str
    #: The only repository whose pull requests the job comments on (the payload must name it).
    upstream: str = "pytorch/pytorch"
    #: The secret holding a token that may comment on ``upstream``'s pull requests.
    token_secret: str = "CKIT_UPSTREAM_TOKEN"
    #: When the periodic run starts (cron, UTC).
    cron: str = "0 3 * * *"


def _check(run: CanaryRun, options: GithubCanaryOptions) -> None:
    check_canary_run(run)
    keys = (run.key,) if run.key is not None else ()
    refuse_expressions((run.baseline, run.ckit, run.python, *keys, *run.run_args,
                        *options.install))
    refuse_bad_runner_labels(options.runner_labels)
    if not _REPO.fullmatch(options.upstream):
        raise InputError(f"--upstream: {options.upstream!r} is not a repository (OWNER/NAME)")
    if not _SECRET.fullmatch(options.token_secret):
        raise InputError(f"--token-secret: {options.token_secret!r} is not a secret name")
    check_cron(options.cron)


def _run_script(run: CanaryRun) -> str:
    # The grade is the comment's to tell: the run's status is kept for the last step.
    return f"""set +e
{run.run_line()}
echo "status=$?" >> "$GITHUB_OUTPUT"
"""


def _comment_script(run: CanaryRun) -> str:
    return f"""mkdir -p {OUT}
if ! {run.comment_line(COMMENT)}; then
  echo "### ckit canary run of {run.vendor}: no comment (run exit status ${{RUN_STATUS:-none}}; \
see the log)" > {COMMENT}
fi
echo >> {COMMENT}
echo "The run: $RUN_URL" >> {COMMENT}
cat {COMMENT} >> "$GITHUB_STEP_SUMMARY"
"""


#: Every payload value is checked in the job; none is ever printed (``::`` workflow commands).
_POST_SCRIPT = f"""set -euo pipefail
if ! [[ "$PR" =~ ^[1-9][0-9]{{0,9}}$ ]]; then
  echo "ckit canary: the dispatched pull request is not a number; no comment" >&2; exit 1
fi
if [ "$UPSTREAM" != "$ALLOWED_UPSTREAM" ]; then
  echo "ckit canary: the dispatch names another repository than $ALLOWED_UPSTREAM" >&2; exit 1
fi
gh pr comment "$PR" --repo "$UPSTREAM" --body-file {COMMENT}
"""


def _steps(run: CanaryRun, options: GithubCanaryOptions) -> list[Step]:
    dispatched = "github.event_name == 'repository_dispatch'"
    run_url = "${{ github.server_url }}/${{ github.repository }}/actions/runs/${{ github.run_id }}"
    return [
        {"uses": CHECKOUT, "with": {"persist-credentials": False}},
        {"name": "Install the kit", "run": "\n".join(options.install)},
        {
            "name": "Install the torch under test",
            # Empty on a schedule: the newest on the index.
            "env": {TORCH_VARIABLE: f"${{{{ {PAYLOAD}.torch }}}}", INDEX_VARIABLE: run.index},
            "run": torch_install_script(run),
        },
        {"id": "run", "name": "Run the canary", "run": _run_script(run)},
        {
            "name": "Write the comment",
            "if": "always()",
            "env": {"RUN_STATUS": "${{ steps.run.outputs.status }}", "RUN_URL": run_url},
            "run": _comment_script(run),
        },
        {
            "name": "Comment on the upstream pull request",
            "if": f"always() && {dispatched}",
            "env": {
                "GH_TOKEN": f"${{{{ secrets.{options.token_secret} }}}}",
                "PR": f"${{{{ {PAYLOAD}.pr }}}}",
                "UPSTREAM": f"${{{{ {PAYLOAD}.repo }}}}",
                "ALLOWED_UPSTREAM": options.upstream,
            },
            "run": _POST_SCRIPT,
        },
        {
            "name": "Upload the run",
            "if": "always()",
            "uses": UPLOAD,
            "with": {"name": OUT, "path": OUT, "if-no-files-found": "warn"},
        },
        {
            # A canary is never certified: a clean one is graded not-certifiable.
            "name": "Fail unless the canary's tests were fine",
            "if": " && ".join(["always()", *(f"steps.run.outputs.status != '{code}'"
                                             for code in clean_exit_codes())]),
            "run": "exit 1",
        },
    ]


def github_canary_workflow(run: CanaryRun, options: GithubCanaryOptions) -> Workflow:
    _check(run, options)
    job: Job = {
        "name": f"ckit canary of {run.vendor}",
        "runs-on": ["self-hosted", *options.runner_labels],
        # The token only reads the checkout; commenting upstream uses the secret's own token.
        "permissions": {"contents": "read"},
        "steps": _steps(run, options),
    }
    return {
        "name": options.workflow_name,
        "on": {"repository_dispatch": {"types": [DISPATCH_TYPE]},
               "schedule": [{"cron": options.cron}]},
        "jobs": {CANARY_JOB: job},
    }


def _header(options: GithubCanaryOptions) -> list[str]:
    payload = ('{"torch": "2.8.0.dev20250601+cpu", "repo": "' + options.upstream
               + '", "pr": 12345}')
    return [
        "ckit canary CI: a dispatched run for an upstream pull request, and a nightly run.",
        "Save as .github/workflows/<name>.yml. Upstream dispatches it with",
        "  gh api repos/VENDOR/REPO/dispatches --input dispatch.json",
        f'where dispatch.json is {{"event_type": "{DISPATCH_TYPE}", "client_payload": {payload}}}',
        f"torch: a version on the index, or a wheel URL; repo must be {options.upstream};",
        f"secret {options.token_secret}: a token that may comment on its pull requests.",
        f"Nightly at {shlex.quote(options.cron)} (UTC): the newest torch on the index, no comment.",
    ]


def render_github_canary(run: CanaryRun, options: GithubCanaryOptions) -> str:
    workflow = github_canary_workflow(run, options)
    check_rendered(workflow, SCHEMA)
    return yaml_text([workflow], _header(options))
