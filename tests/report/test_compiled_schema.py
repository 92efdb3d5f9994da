"""The report schema compiled into Python says "valid" exactly when jsonschema does.

``schema_problem`` trusts the compiled check's yes without asking jsonschema, so a compiled check
looser than the schema would let a malformed report through verification: every mutation below
must get the same answer from both.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from report_helpers import OPTIONAL, REQUIRED_NEVER_SKIP, baseline_records, run_info, skip_entry

from kit.report.compiled_schema import NotCompilable, compile_schema
from kit.report.schema import compiled_check, schema_path, schema_problem
from kit.results import Status, TestRecord

DIALECT = "https://json-schema.org/draft/2020-12/schema"
#: Values a hostile or broken writer might put anywhere; no integral float (2.0), which the
#: compiled check reads strictly and leaves to jsonschema (see the fallback test below).
REPLACEMENTS: tuple[Any, ...] = (
    None, True, False, 0, -1, 7, 0.5, -0.5, "", "x", "PASS", "unit", "a" * 64,
    "0" * 64, [], ["x"], {}, {"x": 1}, "2026-11-22T10:00:00+00:00",
)
MUTATIONS = 1500


def _rich_report(make_report, manifest) -> dict[str, Any]:
    """Records of several statuses, skip entries and policy violations: most schema branches."""
    skips = manifest([
        skip_entry(OPTIONAL),
        skip_entry(REQUIRED_NEVER_SKIP),
        skip_entry("unit/opinfo/cos/*/*", expires="2026-01-01"),
    ])
    records = [
        *baseline_records(),
        TestRecord("unit/opinfo/cos/float32/0", Status.FAIL_NUMERIC, 1.5, "differ", {"numel": 4}),
        TestRecord("unit/opinfo/tan/float16/0", Status.NOT_APPLICABLE, 0.0, "n/a",
                   {"na_reason": "dtype-not-claimed"}),
        TestRecord("flows/executorch_xnnpack/add/0", Status.NOT_DELEGATED, 2.0, "", {}),
    ]
    return make_report(records, skips=skips, run=run_info(complete=False))


def _positions(document: Any) -> Iterator[tuple[Any, Any]]:
    """Every (container, key or index) in ``document``."""
    pending = [document]
    while pending:
        node = pending.pop()
        keys = node.keys() if isinstance(node, dict) else range(len(node))
        for key in keys:
            yield node, key
            if isinstance(node[key], (dict, list)):
                pending.append(node[key])


def _mutate(report: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    mutated = copy.deepcopy(report)
    container, key = rng.choice(list(_positions(mutated)))
    action = rng.choice(("replace", "delete", "add"))
    if action == "replace":
        container[key] = copy.deepcopy(rng.choice(REPLACEMENTS))
    elif action == "delete":
        del container[key]
    elif isinstance(container, dict):
        container[rng.choice(("extra", "x", "id", "status"))] = rng.choice(REPLACEMENTS)
    else:
        container.append(copy.deepcopy(rng.choice([*REPLACEMENTS, container[key]])))
    return mutated


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return json.loads(schema_path().read_text(encoding="utf-8"))


def test_the_report_schema_compiles():
    # Without this the fast path is silently gone and verification slows tenfold.
    assert compiled_check(schema_path()) is not None


def test_compiled_check_agrees_with_jsonschema_on_mutated_reports(make_report, manifest, schema):
    check = compile_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    report = _rich_report(make_report, manifest)
    assert check(report) and validator.is_valid(report)
    rng = random.Random(20261123)
    rejected = 0
    for _ in range(MUTATIONS):
        mutated = _mutate(report, rng)
        expected = validator.is_valid(mutated)
        assert check(mutated) == expected, json.dumps(mutated)[:2000]
        rejected += not expected
    assert rejected > MUTATIONS // 3  # the mutations really do break reports


def test_an_integral_float_is_left_to_jsonschema(make_report):
    report = make_report(baseline_records())
    report["run"]["workers"] = 2.0  # an integer to jsonschema, not to the compiled check
    assert not compiled_check(schema_path())(report)
    assert schema_problem(report) is None


def test_a_record_with_a_smuggled_field_is_named(make_report):
    report = make_report(baseline_records())
    report["records"][1]["verdict_override"] = "PASS"
    problem = schema_problem(report)
    assert problem is not None and "records/1" in problem and "verdict_override" in problem


@pytest.mark.parametrize(
    "schema",
    [
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
        {"$schema": DIALECT, "type": "array", "uniqueItems": True},
        {"$schema": DIALECT, "dependentRequired": {"a": ["b"]}},
        {"$schema": DIALECT, "$ref": "https://example.org/remote.json"},
        {"$schema": DIALECT, "$ref": "#/$defs/absent"},
        {"$schema": DIALECT, "prefixItems": [{"type": "string"}], "items": False},
    ],
    ids=["draft-07", "uniqueItems", "dependentRequired", "remote-ref", "dangling-ref",
         "prefixItems"],
)
def test_what_is_not_compiled_is_refused(schema):
    with pytest.raises(NotCompilable):
        compile_schema(schema)


@pytest.mark.parametrize(
    "negated",
    [{"type": "integer"}, {"enum": [1, 2]}, {"const": 3}, {"$ref": "#/$defs/count"}],
    ids=["integer", "enum-of-numbers", "const-number", "ref-to-integer"],
)
def test_a_strict_reading_is_never_negated(negated):
    # not(stricter) would be looser: {"not": {"type": "integer"}} must still reject 2.0.
    for place in ({"not": negated}, {"if": negated, "then": False}, {"oneOf": [negated, {}]}):
        schema = {"$schema": DIALECT, "$defs": {"count": {"type": "integer"}}, **place}
        with pytest.raises(NotCompilable):
            compile_schema(schema)


def test_a_recursive_schema_compiles_and_checks_every_level():
    tree = {
        "$schema": DIALECT,
        "$defs": {"node": {
            "type": "object", "required": ["name"], "additionalProperties": False,
            "properties": {"name": {"type": "string", "minLength": 1},
                           "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
        }},
        "$ref": "#/$defs/node",
    }
    check = compile_schema(tree)
    good = {"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]}
    deep_bad = copy.deepcopy(good)
    deep_bad["children"][0]["children"][0]["name"] = ""
    assert check(good)
    assert not check(deep_bad)
    assert jsonschema.Draft202012Validator(tree).is_valid(good)
