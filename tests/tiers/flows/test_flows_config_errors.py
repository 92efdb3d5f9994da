"""A malformed flows.yaml is refused with one line naming the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.errors import InputError
from kit.flows.config import load_flows_config
from kit.numerics.criteria import SqnrFloor, Tolerance

VALID = """\
flows:
  executorch_xnnpack:
    tolerance: {atol: 1.0e-4, rtol: 1.0e-3}
  executorch_xnnpack_int8:
    sqnr_floor_db: 20.0
"""

#: Mistake -> (text replaced in VALID, replacement, the message after the file name).
MISTAKES = {
    "unknown_flow": (
        "  executorch_xnnpack:\n", "  tensorrt:\n", "flows.tensorrt: unknown flow 'tensorrt'"
    ),
    "eager_is_not_a_program_flow": (
        "  executorch_xnnpack:\n", "  eager:\n", "flows.eager: not a program flow"
    ),
    "float_flow_judged_by_sqnr": (
        "tolerance: {atol: 1.0e-4, rtol: 1.0e-3}", "sqnr_floor_db: 20.0",
        "flows.executorch_xnnpack.sqnr_floor_db: unknown key; the keys here are tolerance",
    ),
    "quantized_flow_without_floor": (
        "    sqnr_floor_db: 20.0\n", "    {}\n",
        "flows.executorch_xnnpack_int8.sqnr_floor_db: missing; this key is required",
    ),
    "negative_atol": (
        "atol: 1.0e-4", "atol: -1.0",
        "flows.executorch_xnnpack.tolerance.atol: expected a number >= 0, got -1.0",
    ),
    "quoted_floor": (
        "sqnr_floor_db: 20.0", "sqnr_floor_db: '20'",
        "flows.executorch_xnnpack_int8.sqnr_floor_db: expected a number of decibels, got '20'",
    ),
    "second_top_level_key": (
        "flows:\n", "judge: strict\nflows:\n", "judge: unknown key; the keys here are flows"
    ),
}


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "flows.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_valid_flows_config_reads_each_criterion(tmp_path: Path) -> None:
    config = load_flows_config(_write(tmp_path, VALID))
    assert config.criteria == {
        "executorch_xnnpack": Tolerance(1.0e-4, 1.0e-3),
        "executorch_xnnpack_int8": SqnrFloor(20.0),
    }


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_flows_config_mistake_is_one_line_naming_file_and_key(
    tmp_path: Path, mistake: str
) -> None:
    old, new, expected = MISTAKES[mistake]
    assert old in VALID
    path = _write(tmp_path, VALID.replace(old, new, 1))
    with pytest.raises(InputError) as refused:
        load_flows_config(path)
    assert str(refused.value).startswith(f"{path}: {expected}"), str(refused.value)
    assert "\n" not in str(refused.value)
