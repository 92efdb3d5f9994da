"""The second release's environment as a fixture (``second_release_env``)."""

from __future__ import annotations

import pytest
from second_release_env import SecondRelease, find_second_release


@pytest.fixture(scope="module")
def second() -> SecondRelease:
    return find_second_release()
