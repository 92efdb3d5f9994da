"""Real programs and a signed run holding them, built once per session (lowering is slow)."""

from __future__ import annotations

import pytest
from golden_helpers import GoldenRun, Program, make_golden_run, onnx_program, pte_program


@pytest.fixture(scope="session")
def programs() -> list[Program]:
    return [pte_program(), onnx_program()]


@pytest.fixture(scope="session")
def golden_run_once(tmp_path_factory: pytest.TempPathFactory, programs: list[Program]
                    ) -> GoldenRun:
    return make_golden_run(tmp_path_factory.mktemp("golden-run"), programs)


@pytest.fixture
def golden_run(golden_run_once: GoldenRun, tmp_path: pytest.TempPathFactory) -> GoldenRun:
    """A fresh copy for each test: attacks change it."""
    return golden_run_once.copy(tmp_path)  # type: ignore[arg-type]
