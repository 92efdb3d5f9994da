"""Telling a call that draws random numbers: its values are its draws', never comparable.

OpInfo's random samples (SDPA with ``dropout_p > 0``) call the op under a fixed seed that is
restored afterwards (``wrapper_set_seed``), so the CPU generator's state is the same before
and after the call and two calls agree: only a device with CPU's generator and CPU's order of
draws would agree with them too. What tells them apart is inside the call: an ATen op ATen tags
``nondeterministic_seeded`` (``bernoulli_``, ``normal``, ``rand``...) that moved the CPU
generator. The tag alone is not enough: SDPA's fused CPU kernel carries it whether or not its
``dropout_p`` draws anything.

Watching a call costs about a millisecond (every ATen op of it through Python), so it is done
once, when the standard is locked: ``drawing_ids`` decides which tests draw, and
``kit.tiers.unit.locked_ids.RANDOM_DRAWS`` writes them beside the locked list, where the judge
reads them.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import torch

from kit.dispatch_mode import EagerDispatchMode
from kit.standard import Standard
from kit.zero_tensors import materialized

if TYPE_CHECKING:
    from kit.tiers.unit.checking import UnitCase

_SEEDED = torch.Tag.nondeterministic_seeded


class RandomDraws(EagerDispatchMode):
    """A dispatch mode noting whether any op under it drew from torch's CPU generator; it
    changes nothing the ops compute (``drew`` is the finding)."""

    def __init__(self) -> None:
        super().__init__()
        self.drew = False

    def __torch_dispatch__(
        self, func: Any, types: Any, args: Any = (), kwargs: Any = None
    ) -> Any:
        args, kwargs = materialized(args, kwargs or {})
        if self.drew or _SEEDED not in func.tags:
            return func(*args, **kwargs)
        before = torch.random.get_rng_state()
        result = func(*args, **kwargs)
        self.drew = not torch.equal(before, torch.random.get_rng_state())
        return result


def drawing_ids(standard: Standard, test_ids: Iterable[str]) -> list[str]:
    """The tests of ``test_ids`` whose CPU call in the tested dtype draws random numbers."""
    from kit.tiers.unit.cases import unit_case_called_once

    return [test_id for test_id in test_ids
            if _draws(functools.partial(unit_case_called_once, standard, test_id))]


def _draws(build: Callable[[], UnitCase]) -> bool:
    """Whether the case ``build`` makes draws; a case CPU refuses to build or call draws
    nothing (the lock's refusal lists decide what becomes of it)."""
    from kit.tiers.unit.refusals import REFUSALS

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return draws_random_numbers(build())
    except REFUSALS:
        return False


def draws_random_numbers(case: UnitCase) -> bool:
    """Whether ``case``'s CPU call in its tested dtype drew from torch's CPU generator."""
    with torch.no_grad():
        inputs = case.make_inputs("cpu", False)
        with RandomDraws() as draws:
            case.call("cpu", False, inputs)
    return draws.drew
