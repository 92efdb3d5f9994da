"""What the unit tier's config says of one OpInfo op: its dtypes and how it is compared.

Light and without torch, so that both the config reader and the code that runs cases can
import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from kit.numerics.model import Override, Widening
from kit.tiers.unit.unit_id import OPINFO_SOURCE

#: The references an op is judged against (``reference:`` in ``unit.yaml``).
FLOAT64_REFERENCE = "float64"
SAME_DTYPE_REFERENCE = "same-dtype"
REFERENCES = (FLOAT64_REFERENCE, SAME_DTYPE_REFERENCE)
#: The op class of data movement, which no rule's floor class may name.
EXACT_CLASS = "exact"


@dataclass(frozen=True)
class Writes:
    """A write whose winner PyTorch leaves undefined where indices repeat (``index_copy``,
    ``scatter``, ``index_put`` and ``put`` without accumulation): where the op writes ``source``
    into its first input (``args[0]``), addressed by ``index`` along ``dim`` (None: flat
    positions, as ``put``)."""

    #: Input paths (``kwargs['index']``, ``args[2]``), as ``tensor_leaves`` names them.
    index: str
    source: str
    dim: int | None


@dataclass(frozen=True)
class Duplicates:
    """A case whose indices repeat (``duplicates:`` in an op spec): PyTorch's word on its
    order, and for a write without accumulation, what it writes (``kit.tiers.unit.duplicates``).
    The flows tier takes no such case as a subject."""

    #: How PyTorch declares the op nondeterministic (torch.use_deterministic_algorithms); empty
    #: where it declares nothing (``amax`` of duplicates does not depend on their order).
    nondeterministic: str = ""
    #: None: an accumulation, judged by its class's bound, which grows with the terms summed.
    writes: Writes | None = None


@dataclass(frozen=True)
class Comparison:
    """How one op or template is checked against its reference."""

    reference: str = FLOAT64_REFERENCE
    #: For tuple results, the positions compared (None: all), e.g. sort's values but not indices.
    compare_outputs: tuple[int, ...] | None = None
    #: The op class of the standard's numerics model (None: the standard's default class).
    op_class: str | None = None
    #: Per-dtype constants replacing the class's, each with its reason.
    overrides: Mapping[str, Override] = field(default_factory=dict)
    #: Inputs the op updates by design (``args[1]``: batch norm's running mean), compared with
    #: the reference's updated inputs instead of being required unchanged.
    mutates: tuple[str, ...] = ()
    #: Gradients: how the op's bound widens (None: values, judged by the op's own bound).
    widening: Widening | None = None
    #: Gradients: the least normwise scale (the largest ``|grad_output|``).
    scale_floor: float = 0.0
    #: Duplicate indices: judged in any order of the duplicates (None: none declared).
    duplicates: Duplicates | None = None

    def at_least(self, least_class: str) -> Comparison:
        """This comparison, each constant of its class at least ``least_class``'s (no factor):
        for a result whose inputs or intermediates were rounded or approximated where the op's
        own class assumes they were not (autocast, a compiled graph). Data movement stays
        exact: what it copies or selects is exact."""
        if self.op_class == EXACT_CLASS:
            return self
        return replace(self, widening=Widening(1.0, least_class))


@dataclass(frozen=True)
class OpEntry:
    """One OpInfo op of the standard."""

    name: str
    variant: str
    dtypes: tuple[str, ...]
    comparison: Comparison
    #: The id source of its tests: ``opinfo`` (the unit list) or ``sweep``
    #: (``kit.tiers.unit.sweep``).
    source: str = OPINFO_SOURCE

    @property
    def key(self) -> str:
        """The op's segment of a test id: ``max.reduction_with_dim``."""
        return f"{self.name}.{self.variant}" if self.variant else self.name
