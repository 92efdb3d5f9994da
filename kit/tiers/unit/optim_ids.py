"""The unit tier's optimizer source, read from ids alone (light: no torch).

``unit/optim/<optimizer>/<dtype>/<implementation>-<config>``: one of PyTorch's OptimizerInfos
(``optim_db``), a dtype of the standard's ``optimizers`` section, the implementation the
device runs (``forloop``, ``foreach``, ``fused``) and the index of the config among the
OptimizerInfo's ``optim_inputs_func`` configs, e.g. ``unit/optim/AdamW/float32/foreach-4``.

What the kit cannot judge is decided here, in the orchestrator, without importing
``optim_db``: an optimizer of ``UNJUDGED`` (checked against its OptimizerInfo when the standard
is locked, ``kit.tiers.unit.optim_cases``), and a config CPU refuses to construct on the
standard's release (the locked ``OPTIM_REFUSED`` file, decided at lock time). Each is
NOT_APPLICABLE with its reason, listed, never absent from the standard's list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kit.errors import InputError
from kit.outcomes import Inapplicable
from kit.results import NotApplicableReason
from kit.tiers.unit.locked_ids import OPTIM_REFUSED
from kit.tiers.unit.unit_id import UnitId

if TYPE_CHECKING:
    from kit.standard import Standard

SOURCE = "optim"
OPTIM_PREFIX = f"unit/{SOURCE}/"

#: The implementations an optimizer may offer, the plain loop first: the one the float64 CPU
#: reference always runs. ``foreach`` and ``fused`` run where the OptimizerInfo lists them
#: (``supported_impls``).
FORLOOP, FOREACH, FUSED = "forloop", "foreach", "fused"
IMPLEMENTATIONS = (FORLOOP, FOREACH, FUSED)


@dataclass(frozen=True)
class Unjudged:
    """Why the kit judges none of an optimizer's configs: the OptimizerInfo fact it follows
    from (checked at lock time) and the words of its NOT_APPLICABLE record."""

    #: The OptimizerInfo attribute that holds for it (``only_supports_sparse_grads``), or ""
    #: where the reason is in the optimizer's code, not a flag.
    fact: str
    #: A few words for tables (``ckit standard show``): ``sparse gradients only``.
    label: str
    why: str


#: The optimizers whose configs the kit cannot judge against a float64 CPU reference.
UNJUDGED = {
    "SparseAdam": Unjudged(
        "only_supports_sparse_grads", "sparse gradients only",
        "SparseAdam takes sparse gradients only: the kit's seeded gradients are dense"),
    "LBFGS": Unjudged(
        "step_requires_closure", "steps branch on the loss's values",
        "LBFGS's step runs its closure until conditions on the loss's values hold: a float32 "
        "device and the float64 reference may take different iterations, so their parameters "
        "are no rounding apart"),
    "Muon": Unjudged(
        "", "updates in bfloat16 by design",
        "Muon orthogonalizes each update in bfloat16 by design (its Newton-Schulz iteration), "
        "whatever the parameters' dtype: no float64 reference bounds a float32 run's update"),
}

@dataclass(frozen=True)
class OptimId:
    """``unit/optim/AdamW/float32/foreach-4``'s parts."""

    optimizer: str
    dtype: str
    implementation: str
    config: int

    @property
    def test_id(self) -> str:
        return f"{OPTIM_PREFIX}{self.optimizer}/{self.dtype}/{self.implementation}-{self.config}"

    @classmethod
    def of(cls, test_id: str) -> OptimId:
        """``test_id`` read; ``InputError`` when it is no optimizer id."""
        unit = UnitId.of(test_id)
        implementation, label = unit.variant()
        if unit.source != SOURCE or implementation not in IMPLEMENTATIONS or not label.isdigit():
            raise InputError(f"not an optimizer test id: {test_id!r} (expected {OPTIM_PREFIX}"
                             f"OPTIMIZER/DTYPE/IMPLEMENTATION-CONFIG, the implementation one "
                             f"of {', '.join(IMPLEMENTATIONS)})")
        return cls(unit.op, unit.dtype, implementation, int(label))


def optim_inapplicable(standard: Standard, test_id: str) -> Inapplicable | None:
    """NOT_APPLICABLE where the kit cannot judge the optimizer (``UNJUDGED``) or CPU refuses the
    config on the standard's release (``locked_ids.OPTIM_REFUSED``); None otherwise."""
    optim_id = OptimId.of(test_id)
    unjudged = UNJUDGED.get(optim_id.optimizer)
    if unjudged is not None:
        return Inapplicable(NotApplicableReason.OPTIMIZER_NOT_JUDGED, unjudged.why)
    if OPTIM_REFUSED.holds(standard, test_id):
        return Inapplicable(
            NotApplicableReason.OPTIMIZER_CONFIG_REFUSED,
            f"torch {standard.torch_release} refuses to construct {optim_id.optimizer} in this "
            f"config with the {optim_id.implementation} implementation, on CPU too")
    return None
