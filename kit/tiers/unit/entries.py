"""What the unit tier's config says of one OpInfo op: its dtypes and how it is compared.

Light and without torch, so that both the config reader and the code that runs cases can
import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kit.numerics.model import Override, Widening

#: The references an op is judged against (``reference:`` in ``unit.yaml``).
FLOAT64_REFERENCE = "float64"
SAME_DTYPE_REFERENCE = "same-dtype"
REFERENCES = (FLOAT64_REFERENCE, SAME_DTYPE_REFERENCE)


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


@dataclass(frozen=True)
class OpEntry:
    """One OpInfo op of the standard."""

    name: str
    variant: str
    dtypes: tuple[str, ...]
    comparison: Comparison

    @property
    def key(self) -> str:
        """The op's segment of a test id: ``max.reduction_with_dim``."""
        return f"{self.name}.{self.variant}" if self.variant else self.name
