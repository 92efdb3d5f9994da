"""Validating a built report against ``standards/<version>/report.schema.json``.

The kit builds the report itself, so a violation is a bug in the kit, not a user problem:
it raises ``ReportSchemaError`` (not a ``KitError``) so the traceback reaches the bug report.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema

import kit
from kit import paths

SCHEMA_FILE = "report.schema.json"
#: A standard version names a directory under standards/; nothing else may pick the schema.
_VERSION = re.compile(r"v[0-9]+")


class ReportSchemaError(Exception):
    """The kit built a report its own schema rejects."""


def schema_path(standard_version: str = kit.STANDARD_VERSION) -> Path:
    return paths.standard_dir(standard_version) / SCHEMA_FILE


@functools.lru_cache(maxsize=4)
def _validator(path: Path) -> jsonschema.protocols.Validator:
    schema = json.loads(path.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def validate_report(report: Mapping[str, Any]) -> None:
    """Raise ``ReportSchemaError`` naming the first offending field."""
    standard = report.get("standard")
    version = standard.get("version") if isinstance(standard, Mapping) else None
    if not isinstance(version, str) or not _VERSION.fullmatch(version):
        raise ReportSchemaError(f"report names no valid standard version: {version!r}")
    validator = _validator(schema_path(version))
    errors = sorted(validator.iter_errors(report), key=lambda e: [str(p) for p in e.path])
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "(top level)"
        raise ReportSchemaError(
            f"report violates {SCHEMA_FILE} at {where}: {first.message} "
            f"({len(errors)} problem(s) in all)"
        )
