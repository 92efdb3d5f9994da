"""One shared repository for the portal tests: built, signed, audited and rendered once for the
session, the site and the browser tests alike, which only read it (``portal_helpers`` says what
it holds)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest
from portal_helpers import ACME, PortalWorld, gate_policy, submit_all
from submission_helpers import NOW, Repository, audit

from kit.portal.builder import build_site


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PortalWorld]:
    root = tmp_path_factory.mktemp("portal")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(root / "config"))
        patch.delenv("CKIT_SIGNING_KEY", raising=False)
        repo = Repository(root / "repo")
        keys = submit_all(repo)
        audited = dataclasses.replace(audit(repo), identities=(ACME,))
        site = root / "site"
        build_site(audited, site, gate_policy(), NOW)
        yield PortalWorld(
            repo=repo,
            audit=audited,
            site=site,
            acme_old=keys["acme_old"],
            acme_latest=keys["acme_latest"],
            acme_tampered=keys["acme_tampered"],
            bolt=keys["bolt"],
            acme_small=keys["acme_small"],
            cpu=keys["cpu"],
            cpu_old=keys["cpu_old"],
        )
