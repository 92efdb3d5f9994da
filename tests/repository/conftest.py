"""A real shared repository for the submit and audit tests, built once per session.

A bare "origin" whose main branch holds the keyring (both vendors' public keys, filed by
``ckit keys generate``); two real narrowed runs (cpu and simnpu) signed with keys generated under
a private XDG_CONFIG_HOME; cpu submitted with --push and merged into main, then simnpu submitted
with --push (over a file:// URL); a clone with the simnpu branch checked out holds both.
"""

from __future__ import annotations

import pytest
from repository_helpers import SharedRepo, build_shared_repo


@pytest.fixture(scope="session")
def shared(tmp_path_factory: pytest.TempPathFactory) -> SharedRepo:
    """Built once: the two real runs take most of a minute on a small machine."""
    return build_shared_repo(tmp_path_factory.mktemp("shared-repository"))
