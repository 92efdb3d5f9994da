"""Reading ``models.yaml``: the model tier's models per source, flows and tolerances.

Layout (see a standard's ``models.yaml``)::

    tolerance: {atol: ..., rtol: ...}     # the tier's default, float32 device vs float64 reference
    flows: [eager]                        # flows every model runs through unless it says otherwise
    sources:
      <source>:                           # a key of kit.tiers.models.SOURCES
        <model>:                          # the stable id segment: models/<source>/<model>/<flow>
          ...                             # source-specific fields, checked by the source
          flows: [...]                    # optional override of the flows
          tolerance: {atol, rtol}         # optional override; needs `why`
          reference: float32              # optional: reference dtype when float64 cannot run;
          why: "..."                      #   needs `why`

Every problem is an ``InputError`` with one line naming the file and the field.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from kit.config_reader import Node
from kit.numerics.criteria import Tolerance
from kit.numerics.parsing import read_tolerance
from kit.tiers.models.interface import ModelCase, ModelSource

MODEL_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
REFERENCE_DTYPES = ("float64", "float32")
#: Fields every entry may carry; the rest belong to the source.
COMMON_FIELDS = ("flows", "tolerance", "reference", "why")
TOP_KEYS = ("tolerance", "flows", "sources")


@dataclass(frozen=True)
class ModelsConfig:
    path: Path
    tolerance: Tolerance
    flows: tuple[str, ...]
    cases: tuple[ModelCase, ...]

    def cases_of(self, source: str) -> list[ModelCase]:
        return [case for case in self.cases if case.source == source]


def _flows(node: Node, known: Collection[str]) -> tuple[str, ...]:
    return node.choices(sorted(known), non_empty=True, unique=True)


def load_models_config(
    path: Path, sources: Mapping[str, ModelSource], known_flows: Collection[str]
) -> ModelsConfig:
    top = Node.read(path).section(TOP_KEYS, what="a mapping of " + ", ".join(TOP_KEYS))
    tolerance = read_tolerance(top["tolerance"])
    flows = _flows(top["flows"], known_flows)
    top["sources"].section(optional=sources, what="a mapping of sources")  # no unknown source
    cases: list[ModelCase] = []
    for source_name, models in top["sources"].entries(non_empty=True, what="mapping of sources"):
        for model, entry in models.entries(non_empty=True, what="mapping of models"):
            cases.extend(
                _cases_of_entry(sources[source_name], model, entry, tolerance, flows, known_flows)
            )
    return ModelsConfig(path, tolerance, flows, tuple(cases))


def _needs_reason(entry: Node, fields: Mapping[str, Node]) -> None:
    """A tolerance or reference override says why, in ``why``."""
    why = fields.get("why")
    reason = why.text(expected="a reason") if why is not None else ""
    if ("tolerance" in fields or "reference" in fields) and not reason.strip():
        raise entry.child("why", None).error("a tolerance or reference override needs a reason")


def _cases_of_entry(
    source: ModelSource,
    model: str,
    entry: Node,
    default_tolerance: Tolerance,
    default_flows: tuple[str, ...],
    known_flows: Collection[str],
) -> list[ModelCase]:
    if not MODEL_NAME.match(model):
        raise entry.error("model names are lower-case letters, digits, '_', '.', '-'")
    fields = dict(entry.entries(non_empty=True, what="mapping of the model's fields"))
    _needs_reason(entry, fields)
    reference = fields["reference"].choice(REFERENCE_DTYPES) if "reference" in fields else "float64"
    tolerance = read_tolerance(fields["tolerance"]) if "tolerance" in fields else default_tolerance
    flows = _flows(fields["flows"], known_flows) if "flows" in fields else default_flows
    specific = {key: node.value for key, node in fields.items() if key not in COMMON_FIELDS}
    source.validate_entry(model, specific, entry.location)
    return [
        ModelCase(
            source=source.name,
            name=model,
            flow=flow,
            test_id=f"models/{source.name}/{model}/{flow}",
            config=dict(specific),
            tolerance=tolerance,
            reference_dtype=reference,
        )
        for flow in flows
    ]
