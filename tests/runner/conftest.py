from __future__ import annotations

import os
from pathlib import Path

import pytest
from runner_helpers import FIXTURES


@pytest.fixture
def ckit_env(tmp_path: Path) -> dict[str, str]:
    """Environment for a ``ckit`` subprocess: fixture modules importable, private config dir."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(FIXTURES / "python"), *filter(None, [env.get("PYTHONPATH")])]
    )
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    env.pop("CKIT_SIGNING_KEY", None)
    return env
