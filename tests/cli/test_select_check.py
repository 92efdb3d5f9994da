"""``ckit run --select`` matching no test stops before any worker starts, in one line that says
why as far as the locked lists tell: the real CLI, the standard's real lists."""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.cli import main
from kit.errors import ExitCode


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], pattern: str) -> str:
    out = tmp_path / "run"
    code = main(["run", "--vendor", "cpu", "--tier", "unit", "--select", pattern,
                 "--out", str(out), "--no-sign"])
    err = capsys.readouterr().err
    assert code == ExitCode.INPUT_ERROR and err.count("\n") == 1, err
    assert not out.exists()  # refused before the run directory, let alone a worker
    return err


def test_a_pattern_of_the_wrong_case_is_told_patterns_are_case_sensitive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _run(tmp_path, capsys, "Unit/opinfo/add/*/*")
    assert err.startswith("ckit: error: --select matches no test of tier(s) unit in standard ")
    assert "'Unit/opinfo/add/*/*': patterns are case-sensitive; ignoring case it would match " \
        in err and "e.g. unit/opinfo/add/" in err


def test_a_misspelt_op_is_shown_the_closest_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _run(tmp_path, capsys, "unit/opinfo/adds/float32/*")
    assert ("'unit/opinfo/adds/float32/*': closest: unit/opinfo/add/float32/0, "
            "unit/opinfo/add/float32/1, unit/opinfo/add/float32/2") in err
    assert "ids look like unit/" in err  # the list's first id, of whichever source sorts first


def test_a_pattern_both_too_short_and_of_the_wrong_case_is_shown_the_op_it_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``MUL/*`` matches nothing ignoring case either (one segment short), so the hint is the
    closest ids, and the closest op to ``MUL`` is ``mul``, whatever its case."""
    err = _run(tmp_path, capsys, "unit/opinfo/MUL/*")
    assert "'unit/opinfo/MUL/*': closest: unit/opinfo/mul/" in err
