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
from typing import Any

from kit.errors import InputError
from kit.standard import Tolerance
from kit.tiers.models.interface import ModelCase, ModelSource
from kit.yamlio import load_yaml

MODEL_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
REFERENCE_DTYPES = ("float64", "float32")
#: Fields every entry may carry; the rest belong to the source.
COMMON_FIELDS = ("flows", "tolerance", "reference", "why")


@dataclass(frozen=True)
class ModelsConfig:
    path: Path
    tolerance: Tolerance
    flows: tuple[str, ...]
    cases: tuple[ModelCase, ...]

    def cases_of(self, source: str) -> list[ModelCase]:
        return [case for case in self.cases if case.source == source]


class _Reader:
    """Carries the file name so every error names the file and the field."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, where: str, problem: str) -> InputError:
        return InputError(f"{self.path}: {where}: {problem}")

    def mapping(self, value: Any, where: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping) or not value:
            raise self.fail(where, "expected a non-empty mapping")
        return value

    def tolerance(self, value: Any, where: str) -> Tolerance:
        data = self.mapping(value, where)
        unknown = set(data) - {"atol", "rtol"}
        if unknown or not {"atol", "rtol"} <= set(data):
            raise self.fail(where, "expected exactly the keys atol and rtol")
        numbers = {}
        for key in ("atol", "rtol"):
            number = data[key]
            if isinstance(number, bool) or not isinstance(number, (int, float)) or number < 0:
                raise self.fail(f"{where}.{key}", f"expected a number >= 0, got {number!r}")
            numbers[key] = float(number)
        return Tolerance(**numbers)

    def flows(self, value: Any, where: str, known: Collection[str]) -> tuple[str, ...]:
        if not isinstance(value, list) or not value:
            raise self.fail(where, "expected a non-empty list of flows")
        for flow in value:
            if flow not in known:
                raise self.fail(where, f"unknown flow {flow!r} (known: {', '.join(sorted(known))})")
        if len(set(value)) != len(value):
            raise self.fail(where, "flows are listed twice")
        return tuple(value)


def load_models_config(
    path: Path, sources: Mapping[str, ModelSource], known_flows: Collection[str]
) -> ModelsConfig:
    reader = _Reader(path)
    data = reader.mapping(load_yaml(path), "top level")
    unknown = set(data) - {"tolerance", "flows", "sources"}
    if unknown:
        raise reader.fail("top level", f"unknown keys {sorted(unknown)}")
    tolerance = reader.tolerance(data.get("tolerance"), "tolerance")
    flows = reader.flows(data.get("flows"), "flows", known_flows)
    cases: list[ModelCase] = []
    for source_name, models in reader.mapping(data.get("sources"), "sources").items():
        if source_name not in sources:
            raise reader.fail(
                f"sources.{source_name}", f"unknown source (known: {', '.join(sorted(sources))})"
            )
        where = f"sources.{source_name}"
        for model, entry in reader.mapping(models, where).items():
            cases.extend(
                _cases_of_entry(reader, sources[source_name], str(model), entry, tolerance,
                                flows, known_flows)
            )
    return ModelsConfig(path, tolerance, flows, tuple(cases))


def _cases_of_entry(
    reader: _Reader,
    source: ModelSource,
    model: str,
    entry: Any,
    default_tolerance: Tolerance,
    default_flows: tuple[str, ...],
    known_flows: Collection[str],
) -> list[ModelCase]:
    where = f"sources.{source.name}.{model}"
    if not MODEL_NAME.match(model):
        raise reader.fail(where, "model names are lower-case letters, digits, '_', '.', '-'")
    entry = reader.mapping(entry, where)
    overrides = "tolerance" in entry or "reference" in entry
    if overrides and not str(entry.get("why", "")).strip():
        raise reader.fail(f"{where}.why", "a tolerance or reference override needs a reason")
    reference = entry.get("reference", "float64")
    if reference not in REFERENCE_DTYPES:
        raise reader.fail(f"{where}.reference", f"expected one of {list(REFERENCE_DTYPES)}")
    tolerance = (
        reader.tolerance(entry["tolerance"], f"{where}.tolerance")
        if "tolerance" in entry
        else default_tolerance
    )
    flows = (
        reader.flows(entry["flows"], f"{where}.flows", known_flows)
        if "flows" in entry
        else default_flows
    )
    specific = {key: value for key, value in entry.items() if key not in COMMON_FIELDS}
    source.validate_entry(model, specific, f"{reader.path}: {where}")
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
