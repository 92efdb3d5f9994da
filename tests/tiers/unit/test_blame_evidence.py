"""Issue 42: blame ranks suspects by evidence, checked on records alone (the real run on the
trait backend is ``test_trait_backend.py``): a primitive is named only where its own tests fail
the way the composite does, on a use of it the composite's call makes."""

from __future__ import annotations

from kit.grading.blame import with_suspects
from kit.results import Status, TestRecord
from kit.standard import load_standard

SDPA = "unit/opinfo/nn.functional.scaled_dot_product_attention/float32/0"

STANDARD = load_standard()
SDPA_TRANSPOSED = "unit/opspec/sdpa_layouts/float32/odd-causalTrue-layouttransposed"
ATTENTION_COMPOSITE = "unit/opspec/causal_attention_composite/float32/small-k_layoutcontiguous"


def _blamed(failing: list[TestRecord]) -> dict[str, list[str]]:
    blamed = with_suspects(failing, STANDARD)
    return {r.id: r.details.get("suspects", []) for r in blamed}


def test_a_primitive_failing_another_way_or_on_inputs_the_composite_never_passes_is_not_named(
        ) -> None:
    """The issue's case: an attention op spec failing on values, while expand fails only its
    view write (an exception) and where only its ``out=`` form: neither is named; the fused
    attention kernel, whose plain samples fail on values, is, although CPU's trace of this op
    spec splits attention into where, expand and bmm."""
    failing = [
        TestRecord(SDPA_TRANSPOSED, Status.FAIL_NUMERIC),
        TestRecord("unit/opinfo/expand/float32/viewwrite", Status.ERROR),
        TestRecord("unit/opinfo/where/float32/outresize", Status.FAIL_NUMERIC),
        TestRecord("unit/opinfo/bmm/float32/error-0", Status.FAIL_SEMANTIC,
                   details={"failure": "no-error"}),
        TestRecord(SDPA, Status.FAIL_SEMANTIC, details={"failure": "stale-or-nondeterministic"}),
    ]
    assert _blamed(failing)[SDPA_TRANSPOSED] == [SDPA]


def test_a_primitive_failing_the_same_way_on_the_composites_use_is_named() -> None:
    """bmm fails on strided inputs, which the composite passes it (its K is transposed); the
    composite calls no attention kernel, so only bmm is named."""
    failing = [
        TestRecord(ATTENTION_COMPOSITE, Status.FAIL_NUMERIC),
        TestRecord("unit/opinfo/bmm/float32/noncontiguous", Status.FAIL_NUMERIC),
        TestRecord(SDPA, Status.FAIL_NUMERIC),
    ]
    assert _blamed(failing)[ATTENTION_COMPOSITE] == ["unit/opinfo/bmm/float32/noncontiguous"]
