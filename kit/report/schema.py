"""Validating a report against the ``report.schema.json`` of the standard it names.

When the kit builds a report, a violation is a bug in the kit, not a user problem:
``validate_report`` raises ``ReportSchemaError`` (not a ``KitError``) so the traceback reaches the
bug report. A report read from elsewhere is checked with ``schema_problem``, which says in one
line what is wrong and leaves the verdict to its caller. It asks the schema compiled into Python
(``kit.report.compiled_schema``) first, which says "valid" for a whole run's report in a tenth
of a second; only when that says no does ``jsonschema`` judge, and name the problem.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema

from kit.errors import InputError
from kit.report.compiled_schema import Check, NotCompilable, compile_schema
from kit.standard import REPORT_SCHEMA_FILE, load_standard
from kit.standard.catalogue import carried_versions
from kit.standard.inheritance import VERSION_PATTERN

SCHEMA_FILE = REPORT_SCHEMA_FILE
#: Schema messages quote the offending value; a hostile value may be megabytes long.
_MESSAGE_CHARS = 200


class ReportSchemaError(Exception):
    """The kit built a report its own schema rejects."""


def schema_path(standard_version: str | None = None) -> Path:
    """The report schema of standard ``standard_version`` (default: the kit's current one),
    its own or inherited."""
    return load_standard(standard_version).file(SCHEMA_FILE)


@functools.lru_cache(maxsize=4)
def _validator(path: Path) -> jsonschema.protocols.Validator:
    schema = json.loads(path.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


@functools.lru_cache(maxsize=4)
def compiled_check(path: Path) -> Check | None:
    """The schema at ``path`` as one fast predicate; None when it does not compile."""
    try:
        return compile_schema(_validator(path).schema)
    except NotCompilable:
        return None


def known_standard_versions() -> tuple[str, ...]:
    """The standards this kit can judge a report by: those it carries."""
    return carried_versions()


def _standard_version(report: Any) -> Any:
    standard = report.get("standard") if isinstance(report, Mapping) else None
    return standard.get("version") if isinstance(standard, Mapping) else None


def _shorten(text: str) -> str:
    return text if len(text) <= _MESSAGE_CHARS else f"{text[:_MESSAGE_CHARS]}..."


def schema_problem(report: Any) -> str | None:
    """The first way ``report`` breaks the schema of the standard it names, in one line.

    ``None`` when it conforms. A report naming a standard this kit does not know is a problem
    too: there is no schema to judge it by.
    """
    if not isinstance(report, Mapping):
        return f"a report must be a JSON object, got {type(report).__name__}"
    version = _standard_version(report)
    if not isinstance(version, str):
        return "report names no standard (field standard.version)"
    known = known_standard_versions()
    if version not in known:
        return (
            f"report names standard {_shorten(repr(version))}, which this kit does not know "
            f"(it knows {', '.join(known) or 'none'})"
        )
    try:
        path = schema_path(version)
    except InputError as exc:
        return f"standard {version} of this kit cannot be loaded: {exc}"
    if not path.is_file():
        return f"standard {version} of this kit has no {SCHEMA_FILE} (looked up from {path})"
    fast = compiled_check(path)
    if fast is not None and fast(report):
        return None
    validator = _validator(path)
    errors = sorted(validator.iter_errors(report), key=lambda e: [str(p) for p in e.path])
    if not errors:
        return None
    first = errors[0]
    where = "/".join(str(p) for p in first.absolute_path) or "(top level)"
    return (
        f"report violates {SCHEMA_FILE} of standard {version} at {_shorten(where)}: "
        f"{_shorten(first.message)} ({len(errors)} problem(s) in all)"
    )


def validate_report(report: Mapping[str, Any]) -> None:
    """Raise ``ReportSchemaError`` naming the first offending field."""
    version = _standard_version(report)
    if not isinstance(version, str) or not VERSION_PATTERN.fullmatch(version):
        raise ReportSchemaError(f"report names no valid standard version: {version!r}")
    problem = schema_problem(report)
    if problem is not None:
        raise ReportSchemaError(problem)
