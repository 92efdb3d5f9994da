"""What the kit's judge hands each tier's judgement besides the evidence.

Built once by the judge process (``kit.runner.judge.main``) and passed down explicitly, so a
judgement reads nothing from module state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kit.golden import GoldenWriter
    from kit.standard import Standard


@dataclass(frozen=True)
class JudgeContext:
    standard: Standard
    #: Where a ``--golden`` run keeps each passing flow test's artifacts; None: it keeps none.
    golden: GoldenWriter | None = None
