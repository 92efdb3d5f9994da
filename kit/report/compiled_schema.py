"""A JSON Schema compiled into one Python predicate: the fast "valid" for large documents.

``jsonschema`` walks a whole run's report (over 10,000 records) in seconds, most of it resolving
``$ref`` per record, which caps how many reports an auditor can verify. ``compile_schema`` turns
the keywords the kit's schemas use into nested closures that answer only "valid or not".

It may be stricter than ``jsonschema`` but never looser: an integer must be a Python ``int`` (not
``2.0``), ``enum`` and ``const`` compare types strictly, and ``$ref``'s siblings always apply. A
``False`` therefore means "ask ``jsonschema``", which then judges and names the problem; a
schema using a keyword not compiled here raises ``NotCompilable`` and is left to ``jsonschema``.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Check = Callable[[Any], bool]

#: Keywords that only annotate (``format`` too: the kit's validators assert no formats).
_ANNOTATIONS = frozenset({
    "$schema", "$id", "$defs", "$comment", "title", "description", "examples", "default",
    "format", "deprecated", "readOnly", "writeOnly",
})


class NotCompilable(Exception):
    """The schema uses a keyword, or a form of one, that this compiler does not check."""


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)


def _bounded(value: Any) -> bool:
    """What ``jsonschema`` applies ``minimum`` and its kin to: any number but a boolean."""
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


#: Each JSON type as a strict Python test; ``jsonschema`` also takes e.g. ``2.0`` as an integer.
_TYPES: Mapping[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: type(v) is int,
    "number": _is_number,
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
}


def _strictly_equal(left: Any, right: Any) -> bool:
    if isinstance(left, str) and isinstance(right, str):
        return left == right
    if type(left) is not type(right):
        return False
    if type(left) is dict:
        return left.keys() == right.keys() and all(_strictly_equal(left[k], right[k]) for k in left)
    if type(left) is list:
        return len(left) == len(right) and all(map(_strictly_equal, left, right))
    return bool(left == right)


def _all(checks: Sequence[Check]) -> Check:
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda value: first(value) and second(value)

    def every(value: Any) -> bool:
        for check in checks:  # a loop, not all(generator): this runs once per record and field
            if not check(value):
                return False
        return True

    return every


def _when(kind: Check, check: Check) -> Check:
    """``check`` applies to values of one JSON type only, as every such keyword does."""
    return lambda value: not kind(value) or check(value)


class _Compiler:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self._root = root
        self._refs: dict[str, Check] = {}
        self._compiled: dict[str, Check] = {}

    def compile(self, schema: Any) -> Check:
        if schema is True or schema == {}:
            return lambda value: True
        if schema is False:
            return lambda value: False
        if not isinstance(schema, Mapping):
            raise NotCompilable(f"a schema must be an object or a boolean, not {schema!r}")
        checks: list[Check] = []
        keys = set(schema) - _ANNOTATIONS
        for keyword, compile_keyword in _KEYWORDS:
            if keyword in keys:
                checks.append(compile_keyword(self, schema))
                keys -= _CONSUMED.get(keyword, {keyword})
        if keys:
            raise NotCompilable(f"keyword(s) not compiled: {', '.join(sorted(keys))}")
        return _all(checks) if checks else (lambda value: True)

    def ref(self, schema: Mapping[str, Any]) -> Check:
        pointer = schema["$ref"]
        if not isinstance(pointer, str) or not pointer.startswith("#/"):
            raise NotCompilable(f"only local $ref is compiled, not {pointer!r}")
        if pointer in self._compiled:
            return self._compiled[pointer]
        if pointer not in self._refs:
            cell: list[Check] = []
            # Registered before compiling, so a recursive schema refers to itself lazily.
            self._refs[pointer] = lambda value: cell[0](value)
            cell.append(self.compile(self._resolve(pointer)))
            self._compiled[pointer] = cell[0]
        return self._refs[pointer]

    def _resolve(self, pointer: str) -> Any:
        target: Any = self._root
        for part in pointer[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, Mapping) or part not in target:
                raise NotCompilable(f"$ref {pointer!r} points nowhere")
            target = target[part]
        return target

    def type_(self, schema: Mapping[str, Any]) -> Check:
        names = schema["type"]
        names = [names] if isinstance(names, str) else list(names)
        if any(name not in _TYPES for name in names):
            raise NotCompilable(f"unknown type in {names!r}")
        kinds = [_TYPES[name] for name in names]
        return kinds[0] if len(kinds) == 1 else (lambda value: any(k(value) for k in kinds))

    def enum(self, schema: Mapping[str, Any]) -> Check:
        allowed = list(schema["enum"])
        if all(type(item) is str for item in allowed):
            strings = frozenset(allowed)
            return lambda value: isinstance(value, str) and value in strings
        return lambda value: any(_strictly_equal(value, item) for item in allowed)

    def const(self, schema: Mapping[str, Any]) -> Check:
        expected = schema["const"]
        return lambda value: _strictly_equal(value, expected)

    def object_(self, schema: Mapping[str, Any]) -> Check:
        """``properties``, ``additionalProperties``, ``patternProperties`` as one check."""
        named = {key: self.compile(sub) for key, sub in schema.get("properties", {}).items()}
        patterns = [(re.compile(p), self.compile(sub))
                    for p, sub in schema.get("patternProperties", {}).items()]
        extra = schema.get("additionalProperties", True)
        other = None if extra is True else self.compile(extra)

        def named_only(value: dict[str, Any]) -> bool:
            for key, item in value.items():
                known = named.get(key)
                if known is None:
                    if other is not None and not other(item):
                        return False
                elif not known(item):
                    return False
            return True

        def check(value: dict[str, Any]) -> bool:
            for key, item in value.items():
                known = named.get(key)
                if known is not None and not known(item):
                    return False
                matched = [sub for pattern, sub in patterns if pattern.search(key)]
                if not all(sub(item) for sub in matched):
                    return False
                if known is None and not matched and other is not None and not other(item):
                    return False
            return True

        return _when(_TYPES["object"], check if patterns else named_only)

    def required(self, schema: Mapping[str, Any]) -> Check:
        names = frozenset(schema["required"])
        return _when(_TYPES["object"], lambda value: names <= value.keys())

    def property_names(self, schema: Mapping[str, Any]) -> Check:
        check = self.compile(schema["propertyNames"])
        return _when(_TYPES["object"], lambda value: all(check(key) for key in value))

    def items(self, schema: Mapping[str, Any]) -> Check:
        if "prefixItems" in schema or not isinstance(schema["items"], (Mapping, bool)):
            raise NotCompilable("only items with one schema for every item is compiled")
        check = self.compile(schema["items"])
        return _when(_TYPES["array"], lambda value: all(check(item) for item in value))

    def bounds(self, schema: Mapping[str, Any]) -> Check:
        """``minimum``, ``maximum`` and their exclusive forms, on numbers."""
        limits = [(holds, schema[keyword])
                  for keyword, holds in _BOUNDS.items() if keyword in schema]
        return _when(_bounded, lambda value: all(holds(value, limit) for holds, limit in limits))

    def lengths(self, schema: Mapping[str, Any]) -> Check:
        """``minLength``, ``maxLength``, ``minItems``, ``maxItems``: a size within limits."""
        limits = [(_TYPES[kind], holds, schema[keyword])
                  for keyword, (kind, holds) in _LENGTHS.items() if keyword in schema]
        return lambda value: all(not kind(value) or holds(len(value), limit)
                                 for kind, holds, limit in limits)

    def pattern(self, schema: Mapping[str, Any]) -> Check:
        compiled = re.compile(schema["pattern"])
        return _when(_TYPES["string"], lambda value: compiled.search(value) is not None)

    def all_of(self, schema: Mapping[str, Any]) -> Check:
        return _all([self.compile(sub) for sub in schema["allOf"]])

    def any_of(self, schema: Mapping[str, Any]) -> Check:
        checks = [self.compile(sub) for sub in schema["anyOf"]]
        return lambda value: any(check(value) for check in checks)

    def one_of(self, schema: Mapping[str, Any]) -> Check:
        # Exactly one: a stricter branch could turn two matches into one, so branches are exact.
        checks = [self.compile(self.exact(sub)) for sub in schema["oneOf"]]
        return lambda value: sum(1 for check in checks if check(value)) == 1

    def not_(self, schema: Mapping[str, Any]) -> Check:
        check = self.compile(self.exact(schema["not"]))
        return lambda value: not check(value)

    def conditional(self, schema: Mapping[str, Any]) -> Check:
        condition = self.compile(self.exact(schema["if"]))
        then = self.compile(schema.get("then", True))
        otherwise = self.compile(schema.get("else", True))
        return lambda value: then(value) if condition(value) else otherwise(value)

    def exact(self, schema: Any, seen: frozenset[str] = frozenset()) -> Any:
        """``schema`` itself, if this compiler reads it exactly as ``jsonschema`` does.

        Under ``not``, in ``if`` and in a ``oneOf`` branch a stricter reading would make the
        whole looser, so only exact ones are compiled there: no ``integer`` or ``number`` type,
        and ``enum`` or ``const`` of strings only.
        """
        if not isinstance(schema, Mapping):
            return schema
        kinds = schema.get("type", ())
        if {"integer", "number"} & ({kinds} if isinstance(kinds, str) else set(kinds)):
            raise NotCompilable("a number type is read strictly, so not under not, if or oneOf")
        values = [*schema.get("enum", ()), *(("const" in schema) * [schema.get("const")])]
        if any(type(value) is not str for value in values):
            raise NotCompilable("a non-string enum or const is read strictly, so not under not, "
                                "if or oneOf")
        pointer = schema.get("$ref")
        if isinstance(pointer, str) and pointer not in seen:
            self.exact(self._resolve(pointer), seen | {pointer})
        for sub in _subschemas(schema):
            self.exact(sub, seen)
        return schema


def _subschemas(schema: Mapping[str, Any]) -> list[Any]:
    """The schemas directly inside ``schema``."""
    inside: list[Any] = []
    for keyword in ("properties", "patternProperties"):
        inside += list(schema.get(keyword, {}).values())
    for keyword in ("allOf", "anyOf", "oneOf"):
        inside += list(schema.get(keyword, ()))
    for keyword in ("additionalProperties", "propertyNames", "items", "not", "if", "then", "else"):
        if keyword in schema:
            inside.append(schema[keyword])
    return inside


_BOUNDS: Mapping[str, Callable[[Any, Any], bool]] = {
    "minimum": lambda value, limit: value >= limit,
    "maximum": lambda value, limit: value <= limit,
    "exclusiveMinimum": lambda value, limit: value > limit,
    "exclusiveMaximum": lambda value, limit: value < limit,
}
_LENGTHS: Mapping[str, tuple[str, Callable[[int, int], bool]]] = {
    "minLength": ("string", lambda size, limit: size >= limit),
    "maxLength": ("string", lambda size, limit: size <= limit),
    "minItems": ("array", lambda size, limit: size >= limit),
    "maxItems": ("array", lambda size, limit: size <= limit),
}
#: Per keyword that starts a check, the compiler method; one method may consume several keywords.
_KEYWORDS: tuple[tuple[str, Callable[[_Compiler, Mapping[str, Any]], Check]], ...] = (
    ("type", _Compiler.type_),
    ("$ref", _Compiler.ref),
    ("enum", _Compiler.enum),
    ("const", _Compiler.const),
    ("required", _Compiler.required),
    ("properties", _Compiler.object_),
    ("additionalProperties", _Compiler.object_),
    ("patternProperties", _Compiler.object_),
    ("propertyNames", _Compiler.property_names),
    ("items", _Compiler.items),
    *((keyword, _Compiler.bounds) for keyword in _BOUNDS),
    *((keyword, _Compiler.lengths) for keyword in _LENGTHS),
    ("pattern", _Compiler.pattern),
    ("allOf", _Compiler.all_of),
    ("anyOf", _Compiler.any_of),
    ("oneOf", _Compiler.one_of),
    ("not", _Compiler.not_),
    ("if", _Compiler.conditional),
)
#: Keywords a method reads besides the one that starts it, so they are not compiled twice.
_CONSUMED: Mapping[str, set[str]] = {
    "properties": {"properties", "additionalProperties", "patternProperties"},
    "additionalProperties": {"properties", "additionalProperties", "patternProperties"},
    "patternProperties": {"properties", "additionalProperties", "patternProperties"},
    "minimum": set(_BOUNDS),
    "maximum": set(_BOUNDS),
    "exclusiveMinimum": set(_BOUNDS),
    "exclusiveMaximum": set(_BOUNDS),
    **{keyword: set(_LENGTHS) for keyword in _LENGTHS},
    "if": {"if", "then", "else"},
}


#: The one dialect compiled: in it ``$ref``'s siblings apply, as they do here.
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def compile_schema(schema: Mapping[str, Any]) -> Check:
    """One predicate for ``schema`` (its local ``$ref``s resolved); ``NotCompilable`` if not."""
    if schema.get("$schema") != DIALECT:
        raise NotCompilable(f"only {DIALECT} is compiled, not {schema.get('$schema')!r}")
    return _Compiler(schema).compile(schema)
