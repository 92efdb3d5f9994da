"""The shared repository's own GitHub Actions workflow: the audit bot, then the portal.

On a pull request it audits the whole pull request (the submissions it changes; any other path
fails beside a submission, and a pull request without submissions is the maintainers' kind,
labelled ``ckit/maintainers-review`` for a person to read) and answers with a comment (the
audit's checklist) and a label (``ckit/audit-passed`` or ``ckit/audit-failed``), the role the
Kubernetes conformance program's verification bot plays for its results repository. On a push
to the main branch it builds the portal and publishes it with GitHub Pages.

It runs on ``pull_request_target``: the workflow and the auditor's choices (``ckit/``: roots,
released kits, policies) come from the base branch, checked out apart, so a pull request cannot
change how it is judged. The pull request's files are only read (``ckit audit`` never runs what
it audits, and golden programs run in the kit's reference runtimes), and its checkout keeps no
credentials.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from kit.engines.github_actions import CHECKOUT
from kit.engines.template_text import check_rendered, yaml_text
from kit.engines.workflow_types import Job, Step, Workflow
from kit.repository.pull_request import MAINTAINERS_VERDICT
from kit.repository.repo_config import CONFIG_DIR

SCHEMA = "github-actions-workflow.schema.json"
AUDIT_JOB = "audit"
PORTAL_JOB = "portal"
PASSED_LABEL = "ckit/audit-passed"
FAILED_LABEL = "ckit/audit-failed"
#: A maintainers' pull request (no submissions; policies, roots, keyring or workflows changed)
#: that passed its checks: a person reviews what it changes, the bot never passes it.
REVIEW_LABEL = "ckit/maintainers-review"
UPLOAD_PAGES = "actions/upload-pages-artifact@v3"
DEPLOY_PAGES = "actions/deploy-pages@v4"
#: Where the two checkouts of a pull request's run land.
BASE = "base"
PULL = "pull"
#: Where the kit is checked out and installed (``make install``: its venv's ``ckit``).
KIT_DIR = "ckit-src"
CKIT = f"{KIT_DIR}/.venv/bin/ckit"


@dataclass(frozen=True)
class AuditWorkflowOptions:
    #: The kit's GitHub repository (owner/name) and the ref of the kit that audits.
    kit_repository: str
    kit_ref: str
    #: The repository's main branch: pushes to it rebuild the portal.
    branch: str
    workflow_name: str = "ckit audit and portal"


def _install_kit(options: AuditWorkflowOptions) -> list[Step]:
    return [
        {
            "name": "Check out the kit",
            "uses": CHECKOUT,
            "with": {"repository": options.kit_repository, "ref": options.kit_ref,
                     "path": KIT_DIR},
        },
        {"name": "Install the kit", "run": f"make -C {KIT_DIR} install"},
    ]


_AUDIT_SCRIPT = f"""set +e
{CKIT} audit {PULL} --changed-since "$BASE_SHA" --repo-config {BASE}/{CONFIG_DIR} > audit.txt
status=$?
cat audit.txt
echo "status=$status" >> "$GITHUB_OUTPUT"
"""

# The audit's last line is the kit's own words (never a submitter's): it tells a maintainers'
# pull request, which is labelled for review, from a submission that passed.
_ANSWER_SCRIPT = f"""verdict=failed; add={FAILED_LABEL}
if [ "$AUDIT_STATUS" = 0 ]; then
  case "$(tail -n 1 audit.txt)" in
    {shlex.quote(MAINTAINERS_VERDICT)}*) verdict="for maintainers' review"; add={REVIEW_LABEL};;
    *) verdict=passed; add={PASSED_LABEL};;
  esac
fi
{{ echo "## ckit audit: $verdict"; echo; echo '```'; cat audit.txt; echo '```'; }} > comment.md
gh label create "$add" --force --repo "$GITHUB_REPOSITORY"
gh pr comment "$PR" --body-file comment.md --repo "$GITHUB_REPOSITORY"
for drop in {PASSED_LABEL} {FAILED_LABEL} {REVIEW_LABEL}; do
  [ "$drop" = "$add" ] ||
    gh pr edit "$PR" --remove-label "$drop" --repo "$GITHUB_REPOSITORY" || true
done
gh pr edit "$PR" --add-label "$add" --repo "$GITHUB_REPOSITORY"
"""


def _audit_job(options: AuditWorkflowOptions) -> Job:
    return {
        "name": "audit the pull request's submissions",
        "if": "github.event_name == 'pull_request_target'",
        "runs-on": "ubuntu-latest",
        "permissions": {"contents": "read", "pull-requests": "write", "issues": "write"},
        "steps": [
            {
                # The auditor's choices as merged: never the pull request's copy.
                "name": "Check out the base branch",
                "uses": CHECKOUT,
                "with": {"ref": "${{ github.event.pull_request.base.sha }}", "path": BASE,
                         "persist-credentials": False},
            },
            {
                # The whole history: the keyring's rollback check and --changed-since read it.
                "name": "Check out the pull request",
                "uses": CHECKOUT,
                "with": {"ref": "refs/pull/${{ github.event.number }}/merge", "path": PULL,
                         "fetch-depth": 0, "persist-credentials": False},
            },
            *_install_kit(options),
            {
                "id": "audit",
                "name": "Audit the submissions it changes",
                "env": {"BASE_SHA": "${{ github.event.pull_request.base.sha }}"},
                "run": _AUDIT_SCRIPT,
            },
            {
                "name": "Answer with a comment and a label",
                "if": "always()",
                "env": {
                    "GH_TOKEN": "${{ secrets.GITHUB_TOKEN }}",
                    "PR": "${{ github.event.number }}",
                    "AUDIT_STATUS": "${{ steps.audit.outputs.status }}",
                },
                "run": _ANSWER_SCRIPT,
            },
            {
                "name": "Fail when the audit failed",
                "if": "steps.audit.outputs.status != '0'",
                "run": "exit 1",
            },
        ],
    }


def _portal_job(options: AuditWorkflowOptions) -> Job:
    return {
        "name": "build and publish the portal",
        "if": "github.event_name == 'push'",
        "runs-on": "ubuntu-latest",
        "permissions": {"contents": "read", "pages": "write", "id-token": "write"},
        "steps": [
            {"name": "Check out the repository", "uses": CHECKOUT, "with": {"fetch-depth": 0}},
            *_install_kit(options),
            {"name": "Build the portal",
             "run": f"{CKIT} portal . --repo-config {CONFIG_DIR} -o site"},
            {"name": "Upload the portal", "uses": UPLOAD_PAGES, "with": {"path": "site"}},
            {"name": "Publish the portal", "uses": DEPLOY_PAGES},
        ],
    }


def audit_workflow(options: AuditWorkflowOptions) -> Workflow:
    return {
        "name": options.workflow_name,
        "on": {
            "pull_request_target": {"branches": [options.branch]},
            "push": {"branches": [options.branch]},
        },
        "jobs": {AUDIT_JOB: _audit_job(options), PORTAL_JOB: _portal_job(options)},
    }


def render_audit_workflow(options: AuditWorkflowOptions) -> str:
    header = [
        "The shared repository's audit bot and portal (written by `ckit repo init`).",
        "Pull requests: the submissions they change are audited under the base branch's ckit/,",
        "and any other path they change fails (a maintainers' pull request, without",
        f"submissions, is labelled {REVIEW_LABEL}); the answer is a comment and the label",
        f"{PASSED_LABEL}, {FAILED_LABEL} or {REVIEW_LABEL}.",
        f"Pushes to {options.branch}: the portal is built and published with GitHub Pages.",
    ]
    workflow = audit_workflow(options)
    check_rendered(workflow, SCHEMA)
    return yaml_text([workflow], header)
