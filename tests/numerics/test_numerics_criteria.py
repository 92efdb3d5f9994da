"""The one criterion type: each kind judges a result and says what records keep of it.

Every kind (the error model's ``ErrorBound``, the ``Tolerance``, the ``SqnrFloor``) judges a
passing and a failing result through ``Criterion.judge``; its ``describe()`` is the dict report
records keep, pinned here key by key and in order (records are signed and compared across runs).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from kit.config_reader import Node
from kit.errors import InputError
from kit.numerics.criteria import Criterion, ErrorBound, SqnrFloor, Tolerance
from kit.numerics.judging import SignalBelowFloor, assert_close
from kit.numerics.model import Override, Widening
from kit.numerics.parsing import parse_numerics, read_sqnr_floor, read_tolerance
from kit.outcomes import NumericMismatch, ResultMismatch

RULES = parse_numerics(
    {
        "accumulation_dtypes": {"float16": "float32", "float32": "float32"},
        "default_class": "elementwise",
        "classes": {
            "exact": {"exact": True},
            "elementwise": {"ulps": 4},
            "reduction": {"ulps": 4, "accumulation": 4, "accumulates": True},
            "loss": {"ulps": 4, "normwise": 2, "accumulation": 4, "accumulates": True,
                     "magnitude": True},
        },
    },
    "test numerics",
)
REFERENCE = torch.linspace(-2.0, 2.0, 64, dtype=torch.float64).reshape(8, 8)


def _off_by(relative: float) -> torch.Tensor:
    return (REFERENCE * (1 + relative)).to(torch.float32)


# -- ErrorBound -------------------------------------------------------------------------------


def test_error_bound_passes_the_rounded_reference_and_fails_a_wider_error() -> None:
    bound = ErrorBound(RULES, "elementwise")
    assert bound.judge(REFERENCE.to(torch.float32), REFERENCE).passed
    judgement = bound.judge(_off_by(1e-5), REFERENCE)
    assert isinstance(judgement.failure, NumericMismatch)
    assert judgement.problem is not None
    assert judgement.problem.startswith("64/64 elements outside the bound in output: ")


def test_error_bound_grows_with_the_accumulation_length() -> None:
    summed = _off_by(2e-6)
    assert not ErrorBound(RULES, "reduction", length=1).judge(summed, REFERENCE).passed
    assert ErrorBound(RULES, "reduction", length=64).judge(summed, REFERENCE).passed


def test_error_bound_describe_is_stable() -> None:
    override = {"float16": Override({"ulps": 8.0}, "a slower kernel")}
    assert json.dumps(ErrorBound(RULES, "reduction", length=16).describe("float32")) == (
        '{"class": "reduction", "ulps": 4.0, "normwise": 0.0, "accumulation": 4.0, "length": 16}'
    )
    assert json.dumps(ErrorBound(RULES, "loss", length=4, magnitude=2.5).describe("float16")) == (
        '{"class": "loss", "ulps": 4.0, "normwise": 2.0, "accumulation": 4.0, "magnitude": 2.5, '
        '"length": 4}'
    )
    assert json.dumps(ErrorBound(RULES, None, override).describe("float16")) == (
        '{"class": "elementwise", "ulps": 8.0, "normwise": 0.0, "accumulation": 0.0, '
        '"override": "a slower kernel"}'
    )
    assert ErrorBound(RULES, "elementwise").describe("int64") == {"class": "elementwise",
                                                                  "exact": True}
    with pytest.raises(ValueError, match="described for a result dtype"):
        ErrorBound(RULES, "elementwise").describe()


def test_error_bound_measurements_keep_its_description_per_dtype() -> None:
    bound = ErrorBound(RULES, "reduction", length=8)
    indices = torch.arange(4)
    judgement = bound.judge((REFERENCE.to(torch.float32), indices), (REFERENCE, indices))
    assert [(m.where, m.dtype, m.bound) for m in judgement.measurements] == [
        ("output[0]", "float32", bound.describe("float32")),
        ("output[1]", "int64", bound.describe("int64")),
    ]


def test_a_gradient_bound_floors_each_constant_by_its_least_class_then_widens() -> None:
    gradient = Widening(4.0, "loss")
    bound = ErrorBound(RULES, "reduction", length=8, widening=gradient, scale_floor=2.0)
    assert json.dumps(bound.describe("float32")) == (
        '{"class": "reduction", "ulps": 16.0, "normwise": 8.0, "accumulation": 16.0, '
        '"widening": 4.0, "least_class": "loss", "length": 8, "scale_floor": 2.0}'
    )
    # An exact op's gradients are no longer exact; integer results stay exact.
    assert not ErrorBound(RULES, "exact", widening=gradient).model("float32").exact
    assert ErrorBound(RULES, "exact", widening=gradient).model("int64").exact
    # The scale floor: an element 1e-6 off a reference of 1e-3 passes under S = 2.
    reference = torch.tensor([1e-3], dtype=torch.float64)
    off = (reference + 1e-6).to(torch.float32)
    assert bound.judge(off, reference).passed
    assert not ErrorBound(RULES, "reduction", length=8).judge(off, reference).passed


# -- Tolerance --------------------------------------------------------------------------------


def test_tolerance_passes_within_atol_plus_rtol_and_fails_beyond() -> None:
    tolerance = Tolerance(atol=1e-4, rtol=1e-3)
    assert tolerance.judge(_off_by(5e-4), REFERENCE).passed
    failing = tolerance.judge(_off_by(5e-3), REFERENCE)
    worst = failing.measurements[0]
    assert (worst.mismatched, worst.max_abs_err > 5e-3) == (64, True)
    assert isinstance(failing.failure, NumericMismatch)
    assert failing.problem is not None and failing.problem.endswith("(atol 0.0001, rtol 0.001)")


def test_tolerance_holds_integers_to_equality() -> None:
    judgement = Tolerance(atol=10.0, rtol=1.0).judge(torch.tensor([1, 2, 4]), torch.arange(1, 4))
    assert (judgement.passed, judgement.measurements[0].mismatched) == (False, 1)


def test_tolerance_describe_is_stable() -> None:
    assert json.dumps(Tolerance(atol=1e-5, rtol=1e-4).describe()) == (
        '{"atol": 1e-05, "rtol": 0.0001}'
    )
    assert Tolerance(atol=1e-5, rtol=1e-4).describe("float16") == {"atol": 1e-5, "rtol": 1e-4}


# -- SqnrFloor --------------------------------------------------------------------------------


def test_sqnr_floor_passes_quantization_noise_and_fails_a_wrong_scale() -> None:
    floor = SqnrFloor(db=20.0)
    step = 4.0 / 255
    quantized = floor.judge(torch.round(REFERENCE / step) * step, REFERENCE)
    assert quantized.passed and quantized.sqnr_db is not None and quantized.sqnr_db > 40
    wrong_scale = floor.judge(REFERENCE * 1.5, REFERENCE)
    assert wrong_scale.sqnr_db == pytest.approx(20 * math.log10(2))
    assert isinstance(wrong_scale.failure, SignalBelowFloor)
    assert wrong_scale.problem == (
        "outputs are 6.0 dB above their error, below the floor of 20.0 dB"
    )


def test_sqnr_floor_allows_any_finite_error_but_no_stray_nan() -> None:
    floor = SqnrFloor(db=20.0)
    one_far = REFERENCE.clone()
    one_far[0, 0] += 0.5  # one large error; the noise over all elements stays low
    assert floor.judge(one_far, REFERENCE).passed
    stray_nan = REFERENCE.clone()
    stray_nan[0, 0] = math.nan
    judgement = floor.judge(stray_nan, REFERENCE)
    assert isinstance(judgement.failure, NumericMismatch)
    assert judgement.measurements[0].mismatched == 1


def test_sqnr_floor_describe_is_stable() -> None:
    assert json.dumps(SqnrFloor(db=20.0).describe()) == '{"sqnr_floor_db": 20.0}'


# -- one interface ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "criterion",
    [ErrorBound(RULES, "elementwise"), Tolerance(atol=1e-4, rtol=1e-3), SqnrFloor(db=20.0)],
    ids=["error-bound", "tolerance", "sqnr-floor"],
)
def test_every_kind_judges_through_the_same_interface(criterion: Criterion) -> None:
    exact = REFERENCE.to(torch.float32)
    assert assert_close(exact, REFERENCE, criterion)[0].bound == criterion.describe("float32")
    with pytest.raises((NumericMismatch, SignalBelowFloor)):
        assert_close(REFERENCE.to(torch.float32) * 2, REFERENCE, criterion)
    with pytest.raises(ResultMismatch, match=r"output: shape \(64,\) != expected \(8, 8\)"):
        criterion.judge(exact.reshape(-1), REFERENCE)
    with pytest.raises(ResultMismatch, match="expected a sequence of length 2"):
        criterion.judge((exact,), (REFERENCE, REFERENCE))


# -- one parsing path -------------------------------------------------------------------------


def test_tolerances_and_floors_are_read_one_way(tmp_path: Path) -> None:
    source = tmp_path / "models.yaml"
    node = Node.of({"tolerance": {"atol": 1, "rtol": 0.5}, "floor": 30}, source)
    tolerance = read_tolerance(node.child("tolerance", node.value["tolerance"]))
    assert (tolerance, read_sqnr_floor(node.child("floor", 30))) == (
        Tolerance(1.0, 0.5), SqnrFloor(30.0))
    with pytest.raises(InputError, match=r"models.yaml: tolerance.rtol: expected a number >= 0"):
        read_tolerance(node.child("tolerance", {"atol": 1, "rtol": -1}))


def test_the_criteria_load_without_torch() -> None:
    """The standard holds its tolerances as criteria: reading it must not load torch."""
    probe = "import sys, kit.standard, kit.numerics.parsing; print('torch' in sys.modules)"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True)
    assert loaded.stdout.strip() == "False"


def test_a_named_result_and_an_updated_input_are_measured_under_their_names() -> None:
    """``torch.max(x, dim)`` measures ``output.values`` and ``output.indices``; batch norm's
    running statistics, compared like outputs, under their parameters' names."""
    from kit.numerics.comparison import NamedParts, paired_tensors
    from kit.standard import load_standard
    from kit.tiers.unit.cases import unit_case
    from kit.tiers.unit.checking import compared_part

    result = torch.max(torch.arange(6.0).reshape(2, 3), 1)
    assert [where for where, _, _ in paired_tensors(result, result)] == [
        "output.values", "output.indices"]
    case = unit_case(load_standard(), "unit/opinfo/nn.functional.batch_norm/float32/0")
    assert case.input_names["args[1]"] == "running_mean"
    inputs = case.make_inputs("cpu", False)
    parts = compared_part((torch.ones(1), inputs), case.comparison, case.input_names)
    assert isinstance(parts, NamedParts)
    assert list(parts) == ["output", "running_mean (args[1])", "running_var (args[2])"]
    assert [where for where, _, _ in paired_tensors(parts, parts)] == list(parts)
