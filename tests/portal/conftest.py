"""One shared repository for the portal tests: built, signed, audited and rendered once
(``portal_helpers`` says what it holds)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from portal_helpers import PortalWorld, submit_all
from submission_helpers import Repository, audit

from kit.portal.builder import build_site


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PortalWorld]:
    root = tmp_path_factory.mktemp("portal")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(root / "config"))
        patch.delenv("CKIT_SIGNING_KEY", raising=False)
        repo = Repository(root / "repo")
        keys = submit_all(repo)
        audited = audit(repo)
        site = root / "site"
        build_site(audited, site)
        yield PortalWorld(
            repo=repo,
            audit=audited,
            site=site,
            acme_old=keys["acme_old"],
            acme_latest=keys["acme_latest"],
            acme_tampered=keys["acme_tampered"],
            bolt=keys["bolt"],
        )
