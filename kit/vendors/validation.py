"""JSON-Schema validation that reports the first problem as one line: file, field, expectation."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema

from kit.errors import InputError


@functools.cache
def _validator(schema_name: str) -> jsonschema.protocols.Validator:
    schema = json.loads((Path(__file__).parent / schema_name).read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


def _field(error: jsonschema.ValidationError) -> str:
    path = [str(p) for p in error.absolute_path]
    if error.validator == "required":
        # Name the missing field itself, not the mapping that lacks it.
        path.append(error.message.split("'")[1] if "'" in error.message else "?")
    elif error.validator == "additionalProperties":
        known = error.schema.get("properties", {})
        path.append(",".join(sorted(str(k) for k in error.instance if k not in known)))
    return ".".join(path) or "(top level)"


def _expected(error: jsonschema.ValidationError) -> str:
    keyword = error.validator
    value = error.validator_value
    if keyword == "required":
        return "missing; this field is required"
    if keyword == "additionalProperties":
        known = ", ".join(error.schema.get("properties", {}))
        return f"unknown field; expected one of {known}"
    if keyword == "enum":
        return f"expected one of {', '.join(map(str, value))}, got {error.instance!r}"
    if keyword == "pattern":
        return f"expected a value matching {value}, got {error.instance!r}"
    if keyword == "type":
        return f"expected {value}, got {type(error.instance).__name__}"
    return error.message


def validate(document: Any, schema_name: str, source: Path) -> None:
    errors = sorted(_validator(schema_name).iter_errors(document), key=lambda e: list(e.path))
    if errors:
        first = errors[0]
        raise InputError(f"{source}: field {_field(first)}: {_expected(first)}")
