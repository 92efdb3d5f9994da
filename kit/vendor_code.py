"""Whether this process may load another distribution's code through the kit's own entry points.

The judge runs with ``NO_VENDOR_CODE_VARIABLE`` set (``kit.runner.isolation``): there the kit
loads none of the ``ckit.flows`` entry points (``kit.flows``), which name vendor modules. Every
other process (orchestrator, workers, ``ckit`` commands) loads them as usual.
"""

from __future__ import annotations

import os

#: Set to "1" in the judge's environment.
NO_VENDOR_CODE_VARIABLE = "CKIT_NO_VENDOR_CODE"


def vendor_code_allowed() -> bool:
    """False in the judge: no entry point of another distribution may be loaded here."""
    return os.environ.get(NO_VENDOR_CODE_VARIABLE) != "1"
