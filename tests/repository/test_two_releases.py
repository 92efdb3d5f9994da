"""One shared repository holding submissions for every PyTorch release the kit carries a
standard for: each report is audited under its own standard, ``ckit gate --release`` judges
each release on its own submissions, and the portal shows a matrix per release, a vendor
certified on several releases under each.

Reports are built by the kit's own builder under each release's standard and signed with real
keys (tests/portal/submission_helpers.py): only one torch is installed here, so the other
release's environment is recorded as that release's build.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "portal"))

from submission_helpers import NOW, Repository, Run, audit  # noqa: E402

from kit.portal.builder import build_site  # noqa: E402
from kit.repository.gate import Verdict, evaluate_gate, load_gate_policy  # noqa: E402
from kit.repository.layout import torch_release_of  # noqa: E402
from kit.standard import load_standard  # noqa: E402
from kit.standard.catalogue import carried_versions  # noqa: E402


def newest_standard_per_release() -> dict[str, str]:
    """Per carried torch release (``2.13``), the newest standard certifying it."""
    found: dict[str, str] = {}
    for version in carried_versions():
        found[torch_release_of(load_standard(version).torch_release)] = version
    return found


RELEASES = newest_standard_per_release()
pytestmark = pytest.mark.skipif(len(RELEASES) < 2, reason="the kit carries one release only")


@pytest.fixture(autouse=True)
def private_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("CKIT_SIGNING_KEY", raising=False)


@pytest.mark.slow(seconds=60)
def test_one_repository_gates_and_shows_each_release_under_its_own_standard(
    tmp_path: Path,
) -> None:
    repo = Repository(tmp_path / "repo")
    finished = NOW - dt.timedelta(hours=2)
    oldest = min(RELEASES, key=lambda r: tuple(int(p) for p in r.split(".")))
    # acme is certified on every release; beta submitted on the oldest only.
    for version in RELEASES.values():
        repo.submit(Run("acme", finished, standard=version))
    repo.submit(Run("beta", finished, standard=RELEASES[oldest]))

    audited = audit(repo)
    failures = [s.first_failure for s in audited.submissions if not s.passed]
    assert not failures, failures
    judged_by = {(s.key.torch_release, s.key.vendor): s.report.standard.version
                 for s in audited.submissions if s.report is not None}
    assert judged_by == {**{(r, "acme"): v for r, v in RELEASES.items()},
                         (oldest, "beta"): RELEASES[oldest]}

    for release in RELEASES:
        # Each release's gate policy is its own standard's gate.yaml.
        policy = dataclasses.replace(load_gate_policy(release=release),
                                     required_vendors=("acme",))
        gate = evaluate_gate(audited, release, policy, NOW)
        verdicts = {v.vendor: v.verdict for v in gate.vendors}
        expected = {"acme": Verdict.PASSES} | ({"beta": Verdict.PASSES}
                                                if release == oldest else {})
        assert verdicts == expected, (release, gate.to_json())
        assert gate.open

    site = tmp_path / "site"
    build_site(audited, site, load_gate_policy(), NOW)
    index = (site / "index.html").read_text(encoding="utf-8")
    for release in RELEASES:
        assert f"torch {release}" in index or f"PyTorch {release}" in index, release
    acme = next(site.rglob("acme.html")).read_text(encoding="utf-8")
    assert all(release in acme for release in RELEASES)
