"""What a unit test's device call leaves for the judge: one typed value, named fields.

The worker's ``execute_case`` fills it; the evidence file holds it as a plain tree (a dict of
its present fields: the file holds no kit classes, ``kit.evidence_file``), and the judge reads
it back with ``from_tree``, which refuses any other shape as the device's ``ResultMismatch``
(the worker's process runs vendor code: its file is hostile input).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from kit.outcomes import ResultMismatch

#: The fields a tree must hold; the others are present only where the case asks for them.
_REQUIRED = ("result", "inputs")


@dataclass(frozen=True)
class UnitEvidence:
    """The device's call of one unit case, on CPU."""

    #: The call's result.
    result: Any
    #: The inputs after the call (an out-of-place op must leave them unchanged).
    inputs: Any
    #: The facts the case observes of the call, by name (only where it observes any:
    #: ``UnitCase.observe``); what each means is the judge's to say.
    facts: Mapping[str, Any] | None = None
    #: The repeated calls' results (only where the case repeats: ``kit.tiers.unit.repeat``).
    repeated: Mapping[str, Any] | None = None
    #: Where the judged call ran its ops (only where the standard asks for attribution):
    #: ``details.dispatch``, compared by the judge with the ops the call reaches on CPU.
    dispatch: Mapping[str, list[str]] | None = None

    def to_tree(self) -> dict[str, object]:
        """The plain tree the evidence file holds: the present fields by name."""
        tree: dict[str, object] = {"result": self.result, "inputs": self.inputs}
        for name in ("facts", "repeated", "dispatch"):
            value = getattr(self, name)
            if value is not None:
                tree[name] = value
        return tree

    @classmethod
    def from_tree(cls, tree: Any) -> UnitEvidence:
        """The evidence a tree holds; ``ResultMismatch`` when it is no such tree."""
        names = {field.name for field in fields(cls)}
        if not isinstance(tree, Mapping) or not all(key in tree for key in _REQUIRED):
            raise ResultMismatch("the device evidence is not the call's result and inputs")
        unknown = sorted(str(key) for key in tree if key not in names)
        if unknown:
            raise ResultMismatch(f"the device evidence holds unknown parts: {', '.join(unknown)}")
        optional = {key: tree[key] for key in ("facts", "repeated") if key in tree}
        for key, value in optional.items():
            if not isinstance(value, Mapping):
                raise ResultMismatch(f"the device evidence's {key} are not named")
        return cls(tree["result"], tree["inputs"], dispatch=tree.get("dispatch"), **optional)
