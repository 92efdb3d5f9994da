"""A GitHub Actions workflow for a sharded run: one matrix job per shard, then the merge.

The shards run on the vendor's self-hosted runners (their accelerator machines, chosen by a
runner label); each uploads its shard directory as an artifact named like the directory. The
merge job downloads them all back into the same layout and runs ``ckit merge``; it runs even
when a shard failed (``if: always()``) so the merge itself names the shard that is missing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kit.engines.interface import MERGED_DIR, ShardedRun, shard_dir_name
from kit.engines.template_text import check_rendered, check_sharded_run, yaml_text
from kit.engines.workflow_types import Job, Step, Workflow
from kit.errors import InputError

#: GitHub runs at most this many jobs from one matrix.
MAX_MATRIX_JOBS = 256
SHARD_JOB = "shard"
MERGE_JOB = "merge"
#: The shard index reaches the shell as an environment variable, never spliced into the script.
SHARD_VARIABLE = "CKIT_SHARD"
CHECKOUT = "actions/checkout@v4"
UPLOAD = "actions/upload-artifact@v4"
DOWNLOAD = "actions/download-artifact@v4"
SCHEMA = "github-actions-workflow.schema.json"
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
#: GitHub evaluates ``${{ ... }}`` anywhere in a step before any shell reads it: in a ckit run
#: option it would run an expression (``secrets.*``) the vendor never wrote.
EXPRESSION_START = "${{"


@dataclass(frozen=True)
class GithubActionsOptions:
    #: Labels a runner must carry, after ``self-hosted`` (e.g. the vendor's accelerator label).
    runner_labels: tuple[str, ...]
    #: Shell lines that install the kit and the vendor's stack on a runner.
    install: tuple[str, ...]
    workflow_name: str


def default_install(run: ShardedRun) -> tuple[str, ...]:
    """The kit's own front door, then the vendor's stack through its profile."""
    return ("make install", f"{run.ckit} vendors install {run.vendor}")


def _check(run: ShardedRun, options: GithubActionsOptions) -> None:
    check_sharded_run(run)
    if run.shards > MAX_MATRIX_JOBS:
        raise InputError(
            f"--shards: a GitHub Actions matrix runs at most {MAX_MATRIX_JOBS} jobs, "
            f"got {run.shards}"
        )
    refuse_expressions((run.root, *run.run_args))
    refuse_bad_runner_labels(options.runner_labels)


def refuse_expressions(values: Sequence[str]) -> None:
    """No value holds ``${{``: GitHub Actions would evaluate what follows in the workflow."""
    expression = next((a for a in values if EXPRESSION_START in a), None)
    if expression is not None:
        raise InputError(
            f"{expression!r} holds {EXPRESSION_START!r}: GitHub Actions would evaluate it as an "
            "expression in the workflow; leave it out"
        )


def refuse_bad_runner_labels(labels: Sequence[str]) -> None:
    bad = next((label for label in labels if not _LABEL.fullmatch(label)), None)
    if bad is not None:
        raise InputError(f"--runner-label: {bad!r} is not a runner label (letters, digits, ._-)")


def _runs_on(options: GithubActionsOptions) -> list[str]:
    return ["self-hosted", *options.runner_labels]


def _setup_steps(options: GithubActionsOptions) -> list[Step]:
    return [
        {"uses": CHECKOUT},
        {"name": "Install the kit", "run": "\n".join(options.install)},
    ]


def _shard_job(run: ShardedRun, options: GithubActionsOptions) -> Job:
    index = "${{ matrix.shard }}"
    return {
        "name": f"shard {index} of {run.shards}",
        "runs-on": _runs_on(options),
        "strategy": {"fail-fast": False, "matrix": {"shard": list(range(run.shards))}},
        "steps": [
            *_setup_steps(options),
            {
                "name": "Run the shard",
                "env": {SHARD_VARIABLE: index},
                "run": run.shard_line(f"${SHARD_VARIABLE}"),
            },
            {
                # Whatever the shard left, so the merge can say what is missing or broken.
                "name": "Upload the shard",
                "if": "always()",
                "uses": UPLOAD,
                "with": {
                    "name": shard_dir_name(index, run.shards),
                    "path": run.shard_dir(index),
                    "if-no-files-found": "error",
                },
            },
        ],
    }


def _merge_job(run: ShardedRun, options: GithubActionsOptions) -> Job:
    return {
        "name": "merge the shards",
        "needs": SHARD_JOB,
        "if": "always()",
        "runs-on": _runs_on(options),
        "steps": [
            *_setup_steps(options),
            {
                # Each artifact lands in <root>/<its name>: the shard directories, as shards wrote.
                "name": "Download the shards",
                "uses": DOWNLOAD,
                "with": {"pattern": shard_dir_name("*", run.shards), "path": run.root},
            },
            {"name": "Merge the shards", "run": run.merge_line()},
            {
                "name": "Upload the merged report",
                "if": "always()",
                "uses": UPLOAD,
                "with": {"name": MERGED_DIR, "path": f"{run.root}/{MERGED_DIR}"},
            },
        ],
    }


def github_actions_workflow(run: ShardedRun, options: GithubActionsOptions) -> Workflow:
    _check(run, options)
    return {
        "name": options.workflow_name,
        "on": {"workflow_dispatch": {}},
        "jobs": {SHARD_JOB: _shard_job(run, options), MERGE_JOB: _merge_job(run, options)},
    }


def render_github_actions(run: ShardedRun, options: GithubActionsOptions) -> str:
    header = [
        f"ckit conformance run of vendor {run.vendor} in {run.shards} shards, then one merge.",
        "Save as .github/workflows/<name>.yml; start it from the Actions tab (workflow_dispatch).",
    ]
    workflow = github_actions_workflow(run, options)
    check_rendered(workflow, SCHEMA)
    return yaml_text([workflow], header)
