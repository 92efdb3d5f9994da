"""The kit's dispatch modes call each op on plain zeros where autograd passed an efficient zero
tensor (``kit.zero_tensors``): under a mode, torch 2.14.1's CPU kernel read its null memory."""

from __future__ import annotations

import torch
import torch.autograd.forward_ad as fwad

from kit.tiers.unit.random_draws import RandomDraws
from kit.zero_tensors import materialized


def test_a_zero_tensor_becomes_plain_zeros_and_every_other_argument_stays_itself() -> None:
    zero = torch._efficientzerotensor((2, 3))
    plain = torch.ones(2)
    args, kwargs = materialized((zero, [plain], 2.0), {"other": zero})
    for made in (args[0], kwargs["other"]):
        assert not made._is_zerotensor() and made.shape == (2, 3) and made.eq(0).all()
    assert args[1][0] is plain and args[2] == 2.0
    untouched = ((plain,), {"alpha": 2})
    assert materialized(*untouched) == untouched


def test_forward_ad_through_an_integer_exponent_runs_under_a_dispatch_mode() -> None:
    # ldexp's integer exponent has no tangent: forward AD multiplies a ZeroTensor in its stead.
    exponent = torch.tensor([1, 2, 3], dtype=torch.int32)
    with RandomDraws() as draws, fwad.dual_level():
        dual = fwad.make_dual(torch.ones(3), torch.ones(3))
        tangent = fwad.unpack_dual(torch.ldexp(dual, exponent)).tangent
    assert tangent.tolist() == [2.0, 4.0, 8.0]
    assert not draws.drew
