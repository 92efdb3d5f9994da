"""Running one unit case: the device result against a CPU reference, under the standard's rules.

A case is an ``invoke(device, upcast)`` callable that builds fresh inputs on ``device`` (with
floating inputs widened to float64 when ``upcast``) and calls the code under test. The check:

1. CPU in the tested dtype gives the dtypes the device must return (and, for ``same-dtype``
   ops, the reference values);
2. CPU with floating inputs upcast to float64 gives the reference values (``float64`` ops);
3. the device result must have those dtypes and match the reference within the tolerance of
   the tested dtype (``kit.compare.assert_close``).

Errors raised by the device call propagate untouched, so the plugin can classify them (a
``NotImplementedError`` is UNSUPPORTED); an error from a CPU reference is an ERROR: the kit's
curation is wrong (or the vendor's modules changed how CPU behaves).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from kit.compare import assert_close
from kit.context import KitContext
from kit.outcomes import KitOutcome
from kit.unit.config import FLOAT64_REFERENCE, Comparison
from kit.unit.trees import assert_same_dtypes, select_outputs, to_cpu

Invoke = Callable[[str, bool], Any]
#: Dtypes whose inputs a float64 reference widens (float64 itself is its own reference).
WIDENED_DTYPES = frozenset({"float32", "bfloat16", "float16"})


class ReferenceFailure(KitOutcome, RuntimeError):
    """The CPU reference itself failed: normally a bug in the kit's curation.

    A ``KitOutcome`` so that its status stays ERROR even when the wrapped message happens to
    read like "not implemented for" (which would otherwise mean UNSUPPORTED).
    """


def check_case(
    ckit: KitContext, invoke: Invoke, dtype: str, comparison: Comparison, label: str
) -> None:
    with torch.no_grad():
        expected_like = _reference(invoke, upcast=False, label=label)
        if comparison.reference == FLOAT64_REFERENCE and dtype in WIDENED_DTYPES:
            reference = _reference(invoke, upcast=True, label=label)
        else:
            reference = expected_like
        actual = to_cpu(invoke(ckit.device, False))
    picked = comparison.compare_outputs
    actual = select_outputs(actual, picked)
    assert_same_dtypes(actual, select_outputs(expected_like, picked))
    assert_close(
        actual, select_outputs(reference, picked), comparison.tolerance(dtype, ckit.standard)
    )


def _reference(invoke: Invoke, *, upcast: bool, label: str) -> Any:
    try:
        return to_cpu(invoke("cpu", upcast))
    except Exception as exc:  # any failure of the reference is the kit's problem
        kind = "float64 reference" if upcast else "same-dtype CPU run"
        first_line = (str(exc).strip().splitlines() or [""])[0]
        raise ReferenceFailure(
            f"the {kind} of {label} failed on CPU ({type(exc).__name__}: {first_line}): "
            "a bug in the unit tier's curation, or vendor modules that changed CPU behaviour"
        ) from exc
