"""The environment of the kit's second PyTorch release, shared by this directory's tests:
the newest carried standard certifying another release than the installed torch's, and an
interpreter of that release (``make install TORCH=X.Y.Z VENV=.venv-X.Y.Z``).

Found by ``CKIT_SECOND_RELEASE_PYTHON`` (its interpreter), else the repository's
``.venv-<release>/``. Without one the tests skip with the reason; ``CKIT_REQUIRE_SECOND_RELEASE=1``
(CI) makes that a failure.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from kit.standard import load_standard
from kit.standard.catalogue import carried_versions, installed_torch_version, torch_release_of

KIT_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class SecondRelease:
    python: Path
    #: The newest carried standard certifying the release, and the one it extends.
    standard: str
    parent: str
    release: str


def _other_release_standard() -> str | None:
    installed = torch_release_of(installed_torch_version() or "")
    others = [v for v in carried_versions() if load_standard(v).torch_release != installed]
    return others[-1] if others else None


def _interpreter(release: str) -> Path | None:
    named = os.environ.get("CKIT_SECOND_RELEASE_PYTHON")
    if named:
        return Path(named)
    found = KIT_ROOT / f".venv-{release}" / "bin" / "python"
    return found if found.is_file() else None


def find_second_release() -> SecondRelease:
    """The second release's environment; without one the test skips (or fails, under
    ``CKIT_REQUIRE_SECOND_RELEASE=1``)."""
    version = _other_release_standard()
    required = os.environ.get("CKIT_REQUIRE_SECOND_RELEASE") == "1"
    problem = None
    python = None
    if version is None:
        problem = "the kit carries no standard for another torch release"
    else:
        release = load_standard(version).torch_release
        python = _interpreter(release)
        if python is None:
            problem = (f"no torch {release} environment: make install TORCH={release} "
                       f"VENV=.venv-{release}, or set CKIT_SECOND_RELEASE_PYTHON")
    if problem is not None or python is None or version is None:
        if required:
            pytest.fail(f"{problem} (CKIT_REQUIRE_SECOND_RELEASE=1)")
        pytest.skip(f"{problem} (CKIT_REQUIRE_SECOND_RELEASE=1 turns this skip into a failure)")
    standard = load_standard(version)
    assert standard.extends is not None, f"{version} extends no standard to remake it from"
    return SecondRelease(python, version, standard.extends, standard.torch_release)
