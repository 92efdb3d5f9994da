"""Every kind of variant the unit tier builds: the one list of them."""

from __future__ import annotations

from kit.errors import InputError
from kit.tiers.unit.variants.arity import Arity
from kit.tiers.unit.variants.autocast import Autocast
from kit.tiers.unit.variants.backward import Backward
from kit.tiers.unit.variants.convert import Convert
from kit.tiers.unit.variants.empty import Empty
from kit.tiers.unit.variants.errors import Errors
from kit.tiers.unit.variants.expanded import Expanded
from kit.tiers.unit.variants.extremes import Extremes
from kit.tiers.unit.variants.forms import Inplace, InplaceStrided, Method, Out, OutResized
from kit.tiers.unit.variants.forward_ad import ForwardAD
from kit.tiers.unit.variants.gradgrad import GradGrad
from kit.tiers.unit.variants.inplace_backward import InplaceBackward
from kit.tiers.unit.variants.interface import LABEL_SEPARATOR, VariantKind
from kit.tiers.unit.variants.large import Large
from kit.tiers.unit.variants.noncontiguous import Noncontiguous
from kit.tiers.unit.variants.promotion import Promotion
from kit.tiers.unit.variants.scale import Scale
from kit.tiers.unit.variants.special import Special
from kit.tiers.unit.variants.views import ViewWrite

#: In the order a rule name is tried against them.
KINDS: tuple[VariantKind, ...] = (
    Empty(), Noncontiguous(), Expanded(), Large(), Extremes(), Arity(),
    Method(), Inplace(), InplaceStrided(), Out(), OutResized(), ViewWrite(), Special(),
    Promotion(), Scale(), Errors(), Convert(), Backward(), InplaceBackward(), GradGrad(),
    ForwardAD(), Autocast(),
)


def kind_claiming(rule_name: str, where: str) -> VariantKind:
    """The kind a ``coverage.variants`` rule of this name is built by."""
    found = next((kind for kind in KINDS if kind.claims(rule_name)), None)
    if found is None or LABEL_SEPARATOR in rule_name:
        names = [kind.spelling for kind in KINDS]
        raise InputError(f"{where}: unknown variant (expected one of {names})")
    return found


def kind_named(name: str) -> VariantKind:
    """The kind of a parsed rule (``VariantRule.kind``)."""
    return next(kind for kind in KINDS if kind.name == name)
