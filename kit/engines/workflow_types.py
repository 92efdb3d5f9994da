"""The GitHub Actions workflow documents the kit writes, typed: the fields it sets, no others.

Types only (annotations: the documents stay plain dicts, dumped as the kit builds them). Keys
GitHub spells with a hyphen or as a Python keyword (``runs-on``, ``if``) need the functional
``TypedDict`` form.
"""

from __future__ import annotations

from typing import TypedDict

#: A step's ``with:`` inputs: the action's own names, strings, numbers and switches.
StepInputs = dict[str, str | int | bool]

Step = TypedDict("Step", {
    "id": str,
    "name": str,
    "if": str,
    "uses": str,
    "with": StepInputs,
    "env": dict[str, str],
    "run": str,
}, total=False)


class Matrix(TypedDict):
    shard: list[int]


Strategy = TypedDict("Strategy", {"fail-fast": bool, "matrix": Matrix})

Job = TypedDict("Job", {
    "name": str,
    "if": str,
    "needs": str,
    "runs-on": str | list[str],
    "permissions": dict[str, str],
    "strategy": Strategy,
    "steps": list[Step],
}, total=False)


class Branches(TypedDict):
    branches: list[str]


class DispatchTypes(TypedDict):
    types: list[str]


class Schedule(TypedDict):
    cron: str


class NoInputs(TypedDict):
    """``workflow_dispatch: {}``: started by hand, with no inputs."""


class Triggers(TypedDict, total=False):
    workflow_dispatch: NoInputs
    repository_dispatch: DispatchTypes
    schedule: list[Schedule]
    pull_request_target: Branches
    push: Branches


class Workflow(TypedDict):
    name: str
    on: Triggers
    jobs: dict[str, Job]
