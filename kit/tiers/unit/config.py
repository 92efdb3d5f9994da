"""The unit tier's configuration (``standards/<v>/unit.yaml``), parsed and validated.

Every problem is a one-line ``InputError`` naming the file and the key (``kit.config_reader``),
e.g. ``unit.yaml: ops.3 (add).dtypes.1: expected one of float32, ..., bool, got 'float8'``.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit.config_reader import Node, Section
from kit.errors import InputError
from kit.numerics.parsing import parse_overrides
from kit.standard import Standard
from kit.tiers.unit.coverage import Coverage, parse_coverage
from kit.tiers.unit.dtypes import UNIT_DTYPES, parse_dtypes
from kit.tiers.unit.entries import (
    FLOAT64_REFERENCE,
    REFERENCES,
    Comparison,
    Duplicates,
    OpEntry,
    Writes,
)
from kit.tiers.unit.sweep import Exclusion, Sweep, sweep_entries
from kit.tiers.unit.unit_id import OPINFO_SOURCE, SWEEP_SOURCE
from kit.tiers.unit.variants.rules import VariantRule
from kit.yamlio import load_yaml

#: An ATen overload as the dispatcher names it: ``aten::add.Tensor``, ``aten::mm``.
ATEN_OVERLOAD = re.compile(r"aten::[a-z_][a-z0-9_]*(\.[A-Za-z0-9_]+)?\Z")


@dataclass(frozen=True)
class Attribution:
    """``attribution``: each test records where its device call's ops ran (``details.dispatch``,
    ``kit.attribution``); a test whose call sent one of ``native_required`` to the backend's
    fallback fails as ``cpu-fallback``."""

    native_required: tuple[str, ...] = ()


@dataclass(frozen=True)
class Optimizers:
    """``optimizers``: PyTorch's OptimizerInfos as unit tests (``kit.tiers.unit.optim_cases``):
    each config of each optimizer, in each implementation it offers, ``steps`` steps in each of
    ``dtypes``, judged under the op class ``comparison`` names."""

    dtypes: tuple[str, ...]
    steps: int
    comparison: Comparison


@dataclass(frozen=True)
class Modules:
    """``modules``: PyTorch's ModuleInfos as unit tests (``kit.tiers.unit.module_cases``): the
    first ``samples`` module inputs of each ModuleInfo in each of its modes, in each of
    ``dtypes``; the forward's result, the gradients and the buffers judged under the op class
    ``comparison`` names, widened as the ``backward`` variant widens a gradient's bound."""

    dtypes: tuple[str, ...]
    samples: int
    comparison: Comparison


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
    #: None: the standard does not ask where ops ran (v1).
    attribution: Attribution | None = None
    #: None: the standard runs no OptimizerInfo (v1).
    optimizers: Optimizers | None = None
    #: None: the standard runs no ModuleInfo (v1).
    modules: Modules | None = None
    #: None: the standard runs no OpInfo beyond its unit list (v1).
    sweep: Sweep | None = None

    @property
    def op_specs_dirs(self) -> tuple[Path, ...]:
        return (self.op_specs_dir, *self.inherited_op_specs_dirs)

    @functools.cached_property
    def sweep_ops(self) -> tuple[OpEntry, ...]:
        """The sweep's ops on the installed release (``kit.tiers.unit.sweep``); listed once."""
        if self.sweep is None:
            return ()
        return sweep_entries(self.sweep, {entry.key for entry in self.ops})

    @functools.cached_property
    def _sweep_index(self) -> dict[str, OpEntry]:
        return {entry.key: entry for entry in self.sweep_ops}

    def sweeps(self, key: str) -> bool:
        """Whether the sweep runs the op ``key`` on the installed release."""
        return key in self._sweep_index

    def op(self, key: str, source: str = OPINFO_SOURCE) -> OpEntry:
        """The op ``key`` of the id source ``source`` (``unit/<source>/<key>/...``)."""
        if source == SWEEP_SOURCE:
            found = self._sweep_index.get(key)
        else:
            found = next((entry for entry in self.ops if entry.key == key), None)
        if found is None:
            raise InputError(f"{self.source}: no op {key!r} in the unit tier's {source} ops")
        return found

    def samples_cap(self, entry: OpEntry) -> int | None:
        """How many of its OpInfo samples the op runs per dtype (None: every one)."""
        if entry.source == SWEEP_SOURCE and self.sweep is not None:
            return self.sweep.samples
        return self.coverage.samples_cap(entry.key)

    def variants_of(self, entry: OpEntry, dtype: str) -> tuple[VariantRule, ...]:
        """The variant rules the op gets in ``dtype``: a sweep op those the sweep names."""
        if entry.source == SWEEP_SOURCE and self.sweep is not None:
            named = self.sweep.variants_of(entry.key)
            return tuple(rule for rule in self.coverage.variants if rule.name in named
                         and (rule.dtypes is None or dtype in rule.dtypes))
        return self.coverage.variants_of(entry.key, dtype)


@functools.lru_cache(maxsize=8)
def _load_cached(path: Path, mtime_ns: int) -> UnitConfig:
    return parse_unit_config(load_yaml(path), path)


def load_unit_config(standard: Standard) -> UnitConfig:
    """The unit tier of ``standard``, parsed and checked once per process (a worker and a
    judge ask for it several times a test)."""
    path = standard.tier_file("unit")
    try:
        mtime_ns = path.stat().st_mtime_ns
    except OSError:
        raise InputError(f"{path}: file not found") from None
    return _standard_config(path, mtime_ns, standard.directories,
                            frozenset(standard.numerics.classes))


@functools.lru_cache(maxsize=8)
def _standard_config(path: Path, mtime_ns: int, directories: tuple[Path, ...],
                     op_classes: frozenset[str]) -> UnitConfig:
    config = _with_op_specs_of(_load_cached(path, mtime_ns), directories)
    check_op_classes(config, op_classes)
    return config


def _with_op_specs_of(config: UnitConfig, directories: tuple[Path, ...]) -> UnitConfig:
    """The op specs of the standard's own directory, then of those it extends (``directories``):
    ``op_specs`` names the same directory in each, wherever the tier file itself was found."""
    if len(directories) == 1:
        return config
    relative = config.op_specs_dir.relative_to(config.source.parent)
    own, *inherited = (directory / relative for directory in directories)
    return dataclasses.replace(config, op_specs_dir=own, inherited_op_specs_dirs=tuple(inherited))


def check_op_classes(config: UnitConfig, known: frozenset[str]) -> None:
    """Every op names an op class the standard's numerics model defines (``known``)."""
    named = [(f"op {entry.key}", entry.comparison) for entry in config.ops]
    if config.sweep is not None:
        named += [(f"sweep op {key}", comparison) for key, comparison in config.sweep.comparisons]
    for section, settings in (("optimizers", config.optimizers), ("modules", config.modules)):
        if settings is not None:
            named.append((section, settings.comparison))
    for what, comparison in named:
        op_class = comparison.op_class
        if op_class is not None and op_class not in known:
            raise InputError(
                f"{config.source}: {what}: class {op_class!r} is not one of the "
                f"standard's numerics classes {sorted(known)}"
            )


def parse_unit_config(data: Any, source: Path) -> UnitConfig:
    top = Node.of(data, source).section(
        ("ops",), ("coverage", "op_specs", "attribution", "optimizers", "modules", "sweep"),
        what="a mapping"
    )
    op_specs = top.optional(
        "op_specs", "ops", Node.text, expected="a directory relative to the file"
    )
    ops = tuple(_parse_op(item) for item in top["ops"].items(non_empty=True, what="a list of ops"))
    keys = [op.key for op in ops]
    for index, key in enumerate(keys):
        if key in keys[:index]:
            raise top["ops"].error(f"{key!r} is listed twice")
    coverage = parse_coverage(top.data.get("coverage"), str(source), tuple(keys))
    attribution = top.optional("attribution", None, _parse_attribution)
    optimizers = top.optional("optimizers", None, _parse_optimizers)
    modules = top.optional("modules", None, lambda node: _parse_modules(node, coverage))
    sweep = top.optional("sweep", None, _parse_sweep,
                         {rule.name for rule in coverage.variants}, keys)
    return UnitConfig(source, ops, source.parent / op_specs, coverage, attribution=attribution,
                      optimizers=optimizers, modules=modules, sweep=sweep)


def _parse_sweep(node: Node, rule_names: Collection[str], listed: Collection[str]) -> Sweep:
    """``sweep: {samples, variants, excluded: [{reason, ops, why}], ops: {key: {...}}}``."""
    section = node.section(("samples", "variants"), ("excluded", "ops"))
    samples = section["samples"].integer(minimum=1, maximum=100, what="a number of samples")
    variants = section["variants"].choices(sorted(rule_names), unique=True)
    excluded = section.get("excluded")
    items = () if excluded is None else excluded.items(what="a list of {reason, ops, why}")
    exclusions = tuple(_parse_exclusion(item) for item in items)
    reasons: dict[str, str] = {}
    for exclusion, item in zip(exclusions, items, strict=True):
        for op in exclusion.ops:
            if op in reasons or op in listed:
                already = f"excluded already, as {reasons[op]!r}" if op in reasons else (
                    "in the unit list (ops)")
                raise item.error(f"{op!r} is {already}")
            reasons[op] = exclusion.reason
    ops = section.get("ops")
    judged = () if ops is None else ops.entries(what="a mapping of OpInfo keys to judgements")
    comparisons, limits, variant_limits = [], [], []
    for key, entry in judged:
        fields = entry.section((), ("dtypes", "variants", *COMPARISON_FIELDS))
        dtypes = fields.optional("dtypes", UNIT_DTYPES, parse_dtypes)
        if dtypes != UNIT_DTYPES:
            limits.append((key, dtypes))
        if "variants" in fields.data:
            variant_limits.append((key, fields["variants"].choices(variants, unique=True)))
        limited = dtypes != UNIT_DTYPES or "variants" in fields.data
        if limited and not fields.optional("why", "", Node.text, empty_ok=True).strip():
            raise entry.child("why", None).error("say why the op's dtypes or variants are limited")
        comparisons.append((key, parse_comparison(fields, dtypes)))
    return Sweep(samples, variants, exclusions, tuple(comparisons), tuple(limits),
                 tuple(variant_limits))


def _parse_exclusion(node: Node) -> Exclusion:
    section = node.section(("reason", "ops", "why"))
    reason = section["reason"].text(expected="a short phrase, e.g. 'output not unique'")
    ops = section["ops"].strings(expected="OpInfo keys (name, or name.variant)", non_empty=True,
                                 unique=True)
    why = section["why"].text(expected="one line saying why the kit cannot judge them")
    return Exclusion(reason, ops, why)


def _parse_optimizers(node: Node) -> Optimizers:
    """``optimizers: {dtypes: [float32], steps: 3, class: optimizer, why: ...}``."""
    section = node.section(("dtypes", "steps"), ("class", "why"))
    dtypes = parse_dtypes(section["dtypes"])
    steps = section["steps"].integer(minimum=1, maximum=100, what="a number of steps")
    return Optimizers(dtypes, steps, parse_comparison(section, dtypes))


def _parse_modules(node: Node, coverage: Coverage) -> Modules:
    """``modules: {dtypes: [float32], samples: 2, class: composite, why: ...}``. A module's
    gradients are judged as the ``backward`` variant judges an op's: its rule's widening."""
    section = node.section(("dtypes", "samples"), ("class", "why"))
    dtypes = parse_dtypes(section["dtypes"])
    samples = section["samples"].integer(minimum=1, maximum=1000, what="a number of samples")
    rule = next((rule for rule in coverage.variants if rule.kind == "backward"), None)
    if rule is None or rule.widening is None:
        raise node.error("a module's gradients are judged as the backward variant's: the "
                         "standard needs a coverage.variants rule of kind backward")
    comparison = dataclasses.replace(parse_comparison(section, dtypes), widening=rule.widening)
    return Modules(dtypes, samples, comparison)


def _parse_attribution(node: Node) -> Attribution:
    """``attribution: {native_required: [aten::add.Tensor, ...], why}``; ``why`` is required
    with a non-empty list."""
    section = node.section((), ("native_required", "why"))
    required = section.optional(
        "native_required", (), Node.strings, pattern=ATEN_OVERLOAD, unique=True,
        expected="an ATen overload like 'aten::add.Tensor'",
    )
    why = section.optional("why", "", Node.text, expected="a reason", empty_ok=True)
    if required and not why.strip():
        raise node.child("why", None).error("say why these ops must run natively")
    return Attribution(required)


def _op_name(node: Node) -> str:
    """The op's OpInfo name, read first: the op's other messages are labelled with it."""
    fields = dict(node.entries(what="a mapping with at least op and dtypes"))
    if "op" not in fields:
        raise node.child("op", None).error("missing; this key is required")
    return fields["op"].text(expected="the OpInfo name, e.g. 'add'")


def _parse_op(node: Node) -> OpEntry:
    name = _op_name(node)
    op = node.labelled(name).section(("op", "dtypes"), ("variant", *COMPARISON_FIELDS))
    variant = op.optional("variant", "", Node.text, expected="the OpInfo variant_test_name",
                          empty_ok=True)
    dtypes = parse_dtypes(op["dtypes"])
    return OpEntry(name, variant, dtypes, parse_comparison(op, dtypes))




#: The fields op entries and op spec templates share: how the result is judged.
COMPARISON_FIELDS = (
    "reference", "compare_outputs", "class", "numerics", "mutates", "duplicates", "why"
)
#: ``args[1]``, ``kwargs['weight']``: an input of the op's call.
INPUT_PATH = re.compile(r"(?:args|kwargs)\[.*\]", re.DOTALL)


def parse_comparison(fields: Section, dtypes: tuple[str, ...]) -> Comparison:
    """The shared ``reference`` / ``compare_outputs`` / ``class`` / ``numerics`` / ``why``."""
    reference = fields.optional("reference", FLOAT64_REFERENCE, Node.choice, REFERENCES)
    compare_outputs = fields.optional("compare_outputs", None, _positions)
    mutates = fields.optional(
        "mutates", (), Node.strings, pattern=INPUT_PATH, expected="an input path like 'args[1]'"
    )
    why = fields.optional("why", "", Node.text, expected="a reason", empty_ok=True)
    deviates = reference != FLOAT64_REFERENCE or compare_outputs is not None or bool(mutates)
    if deviates and not why.strip():
        raise fields.node.child("why", None).error(
            "say why this op needs its reference, compare_outputs or mutates"
        )
    numerics = fields.get("numerics")
    return Comparison(
        reference=reference,
        compare_outputs=compare_outputs,
        # Checked against the standard's classes when the standard is loaded with the tier.
        op_class=fields.optional(
            "class", None, Node.text, expected="an op class name of the standard's numerics"
        ),
        overrides={} if numerics is None else parse_overrides(
            numerics.value, numerics.location, dtypes
        ),
        mutates=mutates,
        duplicates=fields.optional("duplicates", None, _parse_duplicates),
    )


def _parse_duplicates(node: Node) -> Duplicates:
    """``duplicates: {nondeterministic: <PyTorch's word>, writes: {index, source, dim}}``."""
    section = node.section((), ("nondeterministic", "writes"))
    declared = section.optional("nondeterministic", "", Node.text,
                                expected="how PyTorch declares the op's order")
    writes = section.get("writes")
    if writes is None:
        return Duplicates(declared)
    where = writes.section(("index", "source", "dim"))

    def path(key: str) -> str:
        return where[key].text(pattern=INPUT_PATH, expected="an input path like \"args[1]\"")

    dim = where["dim"]
    return Duplicates(declared, Writes(
        path("index"),
        path("source"),
        None if dim.value is None else dim.integer(what="a dimension or null (flat positions)"),
    ))


def _positions(node: Node) -> tuple[int, ...]:
    """Result positions compared, e.g. sort's values (0) but not its indices."""
    items = node.items(non_empty=True, what="a list of result positions, e.g. [0]")
    return tuple(item.integer(minimum=0, what="a result position") for item in items)


def sweep_exclusions(standard: Standard) -> dict[str, str] | None:
    """The OpInfo keys the standard's sweep excludes, each with its reason; None where the
    standard has no sweep (it runs only its unit list)."""
    sweep = load_unit_config(standard).sweep
    if sweep is None:
        return None
    return {op: exclusion.reason for exclusion in sweep.exclusions for op in exclusion.ops}
