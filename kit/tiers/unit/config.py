"""The unit tier's configuration (``standards/<v>/unit.yaml``), parsed and validated.

Every problem is a one-line ``InputError`` naming the file and the field, e.g.
``unit.yaml: ops[3] (add).dtypes: unknown dtype 'float8'``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kit.errors import InputError
from kit.numerics import Override, parse_overrides
from kit.standard import Standard
from kit.tiers.unit.coverage import Coverage, parse_coverage
from kit.tiers.unit.dtypes import parse_dtypes, reject_duplicates
from kit.yamlio import load_yaml

#: The dtypes the unit tier may test, in the order ids and listings use.
FLOAT64_REFERENCE = "float64"
SAME_DTYPE_REFERENCE = "same-dtype"
REFERENCES = (FLOAT64_REFERENCE, SAME_DTYPE_REFERENCE)


@dataclass(frozen=True)
class Comparison:
    """How one op or template is checked against its reference."""

    reference: str = FLOAT64_REFERENCE
    #: For tuple results, the positions compared (None: all), e.g. sort's values but not indices.
    compare_outputs: tuple[int, ...] | None = None
    #: The op class of the standard's numerics model (None: the standard's default class).
    op_class: str | None = None
    #: Per-dtype constants replacing the class's, each with its reason.
    overrides: Mapping[str, Override] = field(default_factory=dict)
    #: Inputs the op updates by design (``args[1]``: batch norm's running mean), compared with
    #: the reference's updated inputs instead of being required unchanged.
    mutates: tuple[str, ...] = ()


@dataclass(frozen=True)
class OpEntry:
    """One OpInfo op of the standard."""

    name: str
    variant: str
    dtypes: tuple[str, ...]
    comparison: Comparison

    @property
    def key(self) -> str:
        """The op's segment of a test id: ``max.reduction_with_dim``."""
        return f"{self.name}.{self.variant}" if self.variant else self.name


@dataclass(frozen=True)
class UnitConfig:
    source: Path
    ops: tuple[OpEntry, ...]
    op_specs_dir: Path
    #: Which OpInfo samples run per op and the variants added to them (``kit.tiers.unit.coverage``).
    coverage: Coverage = Coverage()
    #: The op spec directories of the standards the standard extends, nearest first: a spec
    #: file is taken from the first directory holding its name (``Standard.file``'s rule).
    inherited_op_specs_dirs: tuple[Path, ...] = ()

    @property
    def op_specs_dirs(self) -> tuple[Path, ...]:
        return (self.op_specs_dir, *self.inherited_op_specs_dirs)

    def op(self, key: str) -> OpEntry:
        for entry in self.ops:
            if entry.key == key:
                return entry
        raise InputError(f"{self.source}: no op {key!r} in the unit tier")


@functools.lru_cache(maxsize=8)
def _load_cached(path: Path, mtime_ns: int) -> UnitConfig:
    return parse_unit_config(load_yaml(path), path)


def load_unit_config(standard: Standard) -> UnitConfig:
    """The unit tier of ``standard``, parsed once per process (workers run many tests)."""
    path = standard.tier_file("unit")
    try:
        mtime_ns = path.stat().st_mtime_ns
    except OSError:
        raise InputError(f"{path}: file not found") from None
    config = _with_standard_op_specs(_load_cached(path, mtime_ns), standard)
    check_op_classes(config, standard)
    return config


def _with_standard_op_specs(config: UnitConfig, standard: Standard) -> UnitConfig:
    """The op specs of the standard's own directory, then of those it extends: ``op_specs``
    names the same directory in each, wherever the tier file itself was found."""
    if not standard.inherited:
        return config
    relative = config.op_specs_dir.relative_to(config.source.parent)
    own, *inherited = (directory / relative for directory in standard.directories)
    return dataclasses.replace(config, op_specs_dir=own, inherited_op_specs_dirs=tuple(inherited))


def check_op_classes(config: UnitConfig, standard: Standard) -> None:
    """Every op names an op class the standard's numerics model defines."""
    known = standard.numerics.classes
    for entry in config.ops:
        op_class = entry.comparison.op_class
        if op_class is not None and op_class not in known:
            raise InputError(
                f"{config.source}: op {entry.key}: class {op_class!r} is not one of the "
                f"standard's numerics classes {sorted(known)}"
            )


def parse_unit_config(data: Any, source: Path) -> UnitConfig:
    where = str(source)
    if not isinstance(data, dict):
        raise InputError(f"{where}: expected a mapping at the top level")
    _reject_unknown(data, {"coverage", "op_specs", "ops"}, where)
    op_specs = data.get("op_specs", "ops")
    if not isinstance(op_specs, str) or not op_specs:
        raise InputError(f"{where}: op_specs: expected a directory relative to the file")
    raw_ops = data.get("ops")
    if not isinstance(raw_ops, list) or not raw_ops:
        raise InputError(f"{where}: ops: expected a non-empty list")
    ops = tuple(_parse_op(raw, f"{where}: ops[{i}]") for i, raw in enumerate(raw_ops))
    reject_duplicates([op.key for op in ops], f"{where}: ops")
    coverage = parse_coverage(data.get("coverage"), where, tuple(op.key for op in ops))
    return UnitConfig(source, ops, source.parent / op_specs, coverage)


def _parse_op(raw: Any, where: str) -> OpEntry:
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected a mapping with at least 'op' and 'dtypes'")
    name = raw.get("op")
    if not isinstance(name, str) or not name:
        raise InputError(f"{where}.op: expected the OpInfo name, e.g. 'add'")
    where = f"{where} ({name})"
    _reject_unknown(
        raw, {"op", "variant", "dtypes", *COMPARISON_FIELDS}, where
    )
    variant = raw.get("variant", "")
    if not isinstance(variant, str):
        raise InputError(f"{where}.variant: expected the OpInfo variant_test_name")
    dtypes = parse_dtypes(raw.get("dtypes"), f"{where}.dtypes")
    return OpEntry(name, variant, dtypes, parse_comparison(raw, where, dtypes))




#: The fields op entries and op spec templates share: how the result is judged.
COMPARISON_FIELDS = ("reference", "compare_outputs", "class", "numerics", "mutates", "why")


def parse_comparison(raw: Mapping[str, Any], where: str, dtypes: tuple[str, ...]) -> Comparison:
    """The shared ``reference`` / ``compare_outputs`` / ``class`` / ``numerics`` / ``why``."""
    reference = raw.get("reference", FLOAT64_REFERENCE)
    if reference not in REFERENCES:
        raise InputError(
            f"{where}.reference: expected one of {list(REFERENCES)}, got {reference!r}"
        )
    compare_outputs = raw.get("compare_outputs")
    if compare_outputs is not None and (
        not isinstance(compare_outputs, list)
        or not compare_outputs
        or not all(
            isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in compare_outputs
        )
    ):
        raise InputError(f"{where}.compare_outputs: expected a list of result positions, e.g. [0]")
    why = raw.get("why")
    mutates = raw.get("mutates", [])
    if not isinstance(mutates, list) or not all(_is_input_path(m) for m in mutates):
        raise InputError(f"{where}.mutates: expected input paths like 'args[1]'")
    deviates = reference != FLOAT64_REFERENCE or compare_outputs is not None or bool(mutates)
    if deviates and (not isinstance(why, str) or not why.strip()):
        raise InputError(
            f"{where}.why: say why this op needs its reference, compare_outputs or mutates"
        )
    return Comparison(
        reference=reference,
        compare_outputs=tuple(compare_outputs) if compare_outputs is not None else None,
        op_class=_parse_class_name(raw.get("class"), f"{where}.class"),
        overrides=parse_overrides(raw.get("numerics"), f"{where}.numerics", dtypes),
        mutates=tuple(mutates),
    )


def _is_input_path(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(("args[", "kwargs[")) and value[-1] == "]"


def _parse_class_name(raw: Any, where: str) -> str | None:
    # Checked against the standard's classes when the standard is loaded with the tier.
    if raw is not None and (not isinstance(raw, str) or not raw):
        raise InputError(f"{where}: expected an op class name of the standard's numerics")
    return raw


def _reject_unknown(raw: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(map(str, raw)) - allowed)
    if unknown:
        raise InputError(f"{where}: unknown field {unknown[0]!r} (allowed: {sorted(allowed)})")

