"""Acceptance: whether a verified report is one a reader takes, apart from whether it is true.

``ckit verify`` proves who signed a report and that its claims hold up; an honest report of a
locally patched kit, an old run or a failing grade passes it. An acceptance policy is the
reader's own conditions on top (which kits, standards, vendors, grades and ages it takes), each
an ``AcceptanceCheck``, all of which must be met.
"""

from kit.acceptance.interface import AcceptanceCheck
from kit.acceptance.policy import AcceptancePolicy, PolicyOutcome, accepted, load_policy

__all__ = ["AcceptanceCheck", "AcceptancePolicy", "PolicyOutcome", "accepted", "load_policy"]
