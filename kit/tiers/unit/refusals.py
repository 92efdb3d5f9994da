"""Unit tests CPU refuses: a database entry whose CPU reference cannot run on the standard's
release (an optimizer config CPU refuses to construct, a module CPU cannot run in float64).

Decided once, in the kit's process, when the standard is locked (``locked_ids.OPTIM_REFUSED``,
``locked_ids.MODULE_REFUSED``): such a test is NOT_APPLICABLE with the kit's reason, never an
ERROR of every run and never left out of the list.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable

import torch

from kit.tiers.unit.checking import WIDENED_DTYPES, UnitCase
from kit.tiers.unit.entries import FLOAT64_REFERENCE

#: What a refusal raises: torch's errors of unsupported arguments, dtypes and shapes. Anything
#: else is a bug of the kit's and stays an error of the lock.
REFUSALS = (RuntimeError, ValueError, TypeError, NotImplementedError)


def cpu_refused(test_ids: Iterable[str], build: Callable[[str], UnitCase]) -> list[str]:
    """The tests of ``test_ids`` whose case (``build``) CPU refuses to build or to call in the
    tested dtype, or in float64 where the reference widens it: the runs the judge makes."""
    refused = []
    for test_id in test_ids:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                case = build(test_id)
                widened = (case.comparison.reference == FLOAT64_REFERENCE
                           and case.dtype in WIDENED_DTYPES)
                with torch.no_grad():
                    for upcast in (False, True) if widened else (False,):
                        case.call("cpu", upcast, case.make_inputs("cpu", upcast))
        except REFUSALS:
            refused.append(test_id)
    return refused
