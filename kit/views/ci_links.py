"""Where the pull-request comment links to: the CI run or job that made it, and the standard.

Read from the variables GitHub Actions and GitLab CI set in every job (documented by each), so a
comment written outside CI simply has no links. Only a plain http(s) URL becomes a link: a
variable is text someone else set, and markdown must not be smuggled in through it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

_PLAIN_URL = re.compile(r"https?://[A-Za-z0-9._~:/?#@!$&'*+,;=%-]+\Z")
_PLAIN_PART = re.compile(r"[A-Za-z0-9._/-]+\Z")


@dataclass(frozen=True)
class CommentLinks:
    #: The CI run (GitHub Actions) or job (GitLab) that wrote the comment.
    run: str | None = None
    #: The standard's ``standard.yaml`` at the commit the job checked out.
    standard: str | None = None


def _url(value: str | None) -> str | None:
    return value if value is not None and _PLAIN_URL.match(value) else None


def _parts(environ: Mapping[str, str], *names: str) -> list[str] | None:
    values = [environ.get(name, "") for name in names]
    return values if all(_PLAIN_PART.match(value) for value in values) else None


def _github(environ: Mapping[str, str], standard_file: str) -> CommentLinks:
    server = _url(environ.get("GITHUB_SERVER_URL"))
    names = _parts(environ, "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    if server is None or names is None:
        return CommentLinks()
    repository, run_id = names
    base = f"{server.rstrip('/')}/{repository}"
    attempt = environ.get("GITHUB_RUN_ATTEMPT", "")
    run = f"{base}/actions/runs/{run_id}" + (f"/attempts/{attempt}" if attempt.isdigit() else "")
    sha = environ.get("GITHUB_SHA", "")
    standard = f"{base}/blob/{sha}/{standard_file}" if sha.isalnum() else None
    return CommentLinks(_url(run), _url(standard))


def _gitlab(environ: Mapping[str, str], standard_file: str) -> CommentLinks:
    project = _url(environ.get("CI_PROJECT_URL"))
    sha = environ.get("CI_COMMIT_SHA", "")
    standard = (_url(f"{project}/-/blob/{sha}/{standard_file}")
                if project is not None and sha.isalnum() else None)
    return CommentLinks(_url(environ.get("CI_JOB_URL")), standard)


def ci_links(environ: Mapping[str, str], standard_version: str) -> CommentLinks:
    """The links ``environ`` (a job's environment) allows; none outside GitHub Actions and
    GitLab CI."""
    standard_file = f"standards/{standard_version}/standard.yaml"
    if not _PLAIN_PART.match(standard_version):
        return CommentLinks()
    if environ.get("GITHUB_ACTIONS") == "true" and environ.get("GITHUB_RUN_ID"):
        return _github(environ, standard_file)
    if environ.get("GITLAB_CI") == "true":
        return _gitlab(environ, standard_file)
    return CommentLinks()
