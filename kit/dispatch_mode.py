"""The kit's base for ``TorchDispatchMode``: Dynamo kept out of its ``__torch_dispatch__`` as
torch keeps it out, without importing Dynamo in a process that never compiles.

torch wraps every mode's ``__torch_dispatch__`` in ``torch._disable_dynamo``, whose first call
imports ``torch._dynamo`` (about 2 s of CPU) to build the disabled version. The kit's modes run
in every worker and judge, most of which only run eager code. Here the wrapper calls the method
as it is while ``torch._dynamo`` is not imported (nothing can be compiling: ``torch.compile``
imports it first) and the disabled version, built once, from the first call after.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

from torch.utils._python_dispatch import TorchDispatchMode

DYNAMO = "torch._dynamo"


def _disabled_once_dynamo_is_imported(dispatch: Callable[..., Any]) -> Callable[..., Any]:
    disabled: Callable[..., Any] | None = None

    @functools.wraps(dispatch)
    def dispatch_outside_dynamo(*args: Any, **kwargs: Any) -> Any:
        nonlocal disabled
        if disabled is None:
            dynamo = sys.modules.get(DYNAMO)
            if dynamo is None:
                return dispatch(*args, **kwargs)
            disabled = dynamo.disable(dispatch, recursive=True)
        return disabled(*args, **kwargs)

    return dispatch_outside_dynamo


class EagerDispatchMode(TorchDispatchMode):
    """A ``TorchDispatchMode`` whose ``__torch_dispatch__`` Dynamo never traces, imported
    only when something compiles (``_disabled_once_dynamo_is_imported``)."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # torch's own wrapping off: the subclass's method is wrapped below instead.
        return False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        dispatch = cls.__dict__.get("__torch_dispatch__")
        if dispatch is not None and not isinstance(dispatch, classmethod):
            cls.__torch_dispatch__ = _disabled_once_dynamo_is_imported(dispatch)  # type: ignore[method-assign]
