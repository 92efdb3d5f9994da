"""Rendering and writing the portal: the same audit always gives the same bytes.

``render_site`` returns every file of the site (path from the site root -> bytes); ``build_site``
writes them into a directory that is new, empty, or a site this builder wrote before (it holds
``SITE_MARKER``), so a mistyped ``-o`` never deletes someone's files.
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from typing import Any

import jinja2

from kit.errors import InputError
from kit.portal.model import Site, site_model
from kit.repository.gate import GatePolicy
from kit.repository.interface import RepositoryAudit

#: The file that marks a directory as a site ``ckit portal`` wrote (and may replace).
SITE_MARKER = ".ckit-portal"
STYLESHEET = "static/portal.css"
_HERE = Path(__file__).resolve().parent


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(_HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def _root_of(page: str) -> str:
    """The relative prefix from ``page`` back to the site root."""
    return "../" * page.count("/")


def _render(env: jinja2.Environment, template: str, page: str, **context: Any) -> bytes:
    html = env.get_template(template).render(root=_root_of(page), page=page, **context)
    return html.encode("utf-8")


def render_index(site: Site, env: jinja2.Environment | None = None) -> bytes:
    """The index alone: each release's gate, its vendors and its matrix."""
    return _render(env or _environment(), "index.html", "index.html", site=site)


def render_pages(site: Site) -> dict[str, bytes]:
    env = _environment()
    pages = {"index.html": render_index(site, env)}
    for vendor in site.vendors:
        pages[vendor.page] = _render(env, "vendor.html", vendor.page, site=site, vendor=vendor)
    for submission in site.submissions:
        pages[submission.page] = _render(
            env, "submission.html", submission.page, site=site, submission=submission
        )
    for standard in site.standards:
        pages[standard.page] = _render(env, "standard.html", standard.page, site=site,
                                       standard=standard)
    for performance in site.performance:
        pages[performance.page] = _render(env, "performance.html", performance.page, site=site,
                                          performance=performance)
    pages[STYLESHEET] = (_HERE / "static" / "portal.css").read_bytes()
    return dict(sorted(pages.items()))


def render_site(audit: RepositoryAudit, policy: GatePolicy, now: dt.datetime) -> dict[str, bytes]:
    """The site of ``audit`` with each release's gate under ``policy`` at ``now``."""
    return render_pages(site_model(audit, policy, now))


def _prepare(out_dir: Path) -> None:
    if out_dir.is_symlink() or (out_dir.exists() and not out_dir.is_dir()):
        raise InputError(f"{out_dir} is not a directory")
    if out_dir.is_dir() and any(out_dir.iterdir()):
        if not (out_dir / SITE_MARKER).is_file():
            raise InputError(
                f"{out_dir} is not empty and holds no portal this command built; "
                "choose a new or empty directory"
            )
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)


def build_site(
    audit: RepositoryAudit, out_dir: Path, policy: GatePolicy, now: dt.datetime
) -> list[Path]:
    """Write the site under ``out_dir``; the files written, sorted."""
    files = render_site(audit, policy, now)
    _prepare(out_dir)
    written = []
    for relative, data in files.items():
        path = out_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written.append(path)
    (out_dir / SITE_MARKER).write_text("built by ckit portal\n", encoding="utf-8")
    return written
