"""The unit tier's module source, read from ids alone (light: no torch).

``unit/module/<module>/<dtype>/<mode>-<sample>``: one of PyTorch's ModuleInfos (``module_db``),
a dtype of the standard's ``modules`` section, the mode the module runs in (``train``; ``eval``
where the ModuleInfo says the two differ; ``channels_last`` where it declares that the memory
format affects its result) and the index of the sample among the ModuleInfo's
``module_inputs_func`` inputs in that mode, e.g. ``unit/module/nn.Conv2d/float32/eval-1``.

What the kit cannot judge is decided here, in the orchestrator, without importing
``module_db``: a sample whose module CPU refuses to construct or run in the tested dtype or in
float64 on the standard's release (the locked ``MODULE_REFUSED`` file, decided at lock time).
A sample that draws random numbers (dropout in training) is the unit tier's
``draws-random-numbers``, as any unit test's. Each is NOT_APPLICABLE with its reason, listed,
never absent from the standard's list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kit.errors import InputError
from kit.outcomes import Inapplicable
from kit.results import NotApplicableReason
from kit.tiers.unit.locked_ids import MODULE_REFUSED
from kit.tiers.unit.unit_id import UnitId

if TYPE_CHECKING:
    from kit.standard import Standard

SOURCE = "module"
MODULE_PREFIX = f"unit/{SOURCE}/"

#: The modes a module runs in: training always; evaluation where the ModuleInfo says the two
#: differ (``train_and_eval_differ``); training on channels-last inputs and parameters where it
#: declares the memory format affects its result (``module_memformat_affects_out``).
TRAIN, EVAL, CHANNELS_LAST = "train", "eval", "channels_last"
MODES = (TRAIN, EVAL, CHANNELS_LAST)


@dataclass(frozen=True)
class ModuleId:
    """``unit/module/nn.Conv2d/float32/channels_last-1``'s parts."""

    module: str
    dtype: str
    mode: str
    sample: int

    @property
    def test_id(self) -> str:
        return f"{MODULE_PREFIX}{self.module}/{self.dtype}/{self.mode}-{self.sample}"

    @property
    def training(self) -> bool:
        return self.mode != EVAL

    @classmethod
    def of(cls, test_id: str) -> ModuleId:
        """``test_id`` read; ``InputError`` when it is no module id."""
        unit = UnitId.of(test_id)
        mode, sample = unit.variant()
        if unit.source != SOURCE or mode not in MODES or not sample.isdigit():
            raise InputError(f"not a module test id: {test_id!r} (expected {MODULE_PREFIX}"
                             f"MODULE/DTYPE/MODE-SAMPLE, the mode one of {', '.join(MODES)})")
        return cls(unit.op, unit.dtype, mode, int(sample))


def module_inapplicable(standard: Standard, test_id: str) -> Inapplicable | None:
    """NOT_APPLICABLE where CPU refuses the sample's module on the standard's release
    (``locked_ids.MODULE_REFUSED``); None otherwise."""
    module_id = ModuleId.of(test_id)
    if MODULE_REFUSED.holds(standard, test_id):
        return Inapplicable(
            NotApplicableReason.MODULE_REFUSED,
            f"torch {standard.torch_release} refuses to construct or run {module_id.module} on "
            f"this sample in {module_id.dtype} or float64 on CPU: there is no reference to "
            "judge the device against")
    return None
