"""``ckit standard check-corpus`` and the "cannot fail" check of ``ckit standard lock --check``.

The shared corpus holds what PyTorch's CUDA backend returned on a real H100 for half of the unit
tier: the standard must accept all of it. A corpus recorded here from the CPU shows the other
half of the contract: one wrong value is rejected, naming the test.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch
from readme_clone import KIT_ROOT, block_commands, readme_block

from kit.cli import main
from kit.numerics.model import ClassSpec
from kit.standard import load_standard
from kit.tiers.unit.cases import unit_case
from kit.tiers.unit.vacuity import unfailable_tests

#: The README's check-corpus line, run as written from the kit's root: the shared corpus is
#: kept outside the kit, beside it.
CORPUS_MARKER = "To judge recorded outputs of real hardware"
RECORDED = [
    "unit/opinfo/mm/float32/0",
    "unit/opinfo/cos/int64/0",
    "unit/opinfo/sum/float16/0",
    "unit/opspec/sum_large/bfloat16/odd-dim-1-layoutcontiguous",
]


def test_the_h100_corpus_has_no_false_failures(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's block, in this process: the corpus and the CPU-only inputs are loaded once."""
    ((program, *args),) = block_commands(readme_block(CORPUS_MARKER))
    assert program == ".venv/bin/ckit" and args[:2] == ["standard", "check-corpus"], args
    if not (KIT_ROOT / args[-1]).is_file():
        pytest.skip(f"no shared corpus at {args[-1]} (from the kit's root)")
    monkeypatch.chdir(KIT_ROOT)
    code = main(args)
    out = capsys.readouterr().out
    assert code == 0, out[-3000:]
    assert out.strip().endswith("FAIL, 0 UNKNOWN") and " 0 FAIL" in out


def _record(path: Path, wrong: str | None = None) -> Path:
    """A corpus of the CPU's own results for RECORDED; ``wrong`` gets one value off by 5%
    (more than 4 ulps of bfloat16)."""
    standard = load_standard()
    arrays = {}
    for test_id in RECORDED:
        case = unit_case(standard, test_id)
        actual = case.call("cpu", False, case.make_inputs("cpu", False))
        widened = case.dtype in ("float32", "float16", "bfloat16")
        reference = case.call("cpu", widened, case.make_inputs("cpu", widened))
        if test_id == wrong:
            actual = actual.clone()
            actual.view(-1)[0] *= 1.05
        arrays[f"{test_id}::actual::0"] = actual.float().numpy()
        arrays[f"{test_id}::dtype::0"] = np.array(str(actual.dtype).removeprefix("torch."))
        arrays[f"{test_id}::reference::0"] = reference.numpy()
    np.savez_compressed(path, **arrays)
    return path


def test_a_recorded_cpu_corpus_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["standard", "check-corpus", "--all", str(_record(tmp_path / "c.npz"))]) == 0
    out = capsys.readouterr().out
    assert f"{len(RECORDED)} recorded tests: {len(RECORDED)} PASS, 0 FAIL" in out
    assert all(f"PASS {test_id}:" in out for test_id in RECORDED)


@pytest.mark.parametrize("wrong", RECORDED)
def test_one_wrong_value_fails_naming_the_test(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], wrong: str
) -> None:
    corpus = _record(tmp_path / "c.npz", wrong=wrong)
    assert main(["standard", "check-corpus", str(corpus)]) == 1
    out = capsys.readouterr().out
    assert f"FAIL {wrong}:" in out
    assert "1 FAIL" in out


def test_a_missing_corpus_is_one_line_and_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["standard", "check-corpus", "/nonexistent/corpus.npz"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such corpus file" in err


def test_a_bound_wider_than_the_values_is_flagged_as_unable_to_fail() -> None:
    """softmax over a 32000-wide row: every probability is tiny, so a loose normwise term
    (here 2000 eps of float16) lets an all-zero result pass; the lock check must say so."""
    standard = load_standard()
    test_id = "unit/opspec/softmax_large/float16/vocab-layoutcontiguous"
    assert list(unfailable_tests(standard, [test_id])) == []
    classes = dict(standard.numerics.classes)
    classes["composite"] = dataclasses.replace(classes["composite"], normwise=2000.0)
    loose = dataclasses.replace(
        standard, numerics=dataclasses.replace(standard.numerics, classes=classes)
    )
    assert isinstance(classes["composite"], ClassSpec)
    assert list(unfailable_tests(loose, [test_id])) == [test_id]


def test_zero_as_the_right_answer_is_not_flagged() -> None:
    """prod of 125 small values underflows: zero is the correct float32 result."""
    standard = load_standard()
    case = unit_case(standard, "unit/opinfo/prod/float32/0")
    exact = case.call("cpu", True, case.make_inputs("cpu", True))
    assert exact != 0 and exact.to(torch.float32) == 0
    assert list(unfailable_tests(standard, ["unit/opinfo/prod/float32/0"])) == []
