"""Samples made once: the judge takes the inputs the device's evidence holds where they are the
standard's.

Rebuilding an OpInfo case means generating the op's samples again (a ``scale`` input is 2^24
elements), which the worker has just done. The evidence already holds the inputs after the
device call (``UnitEvidence.inputs``): where their digest, computed in the judge's process as
the lock's child computes it, is the one the standard locked, on the standard's own torch
release, they are the standard's inputs, bit for bit, and the call left them as they were; the
judge then builds the case on them (an OpInfo position, or a variant that calls the op on its
sample as built), generating nothing. Anything else (no locked digest, another digest: an input
the call wrote, a layout the file does not keep, a tree the case cannot be built from; a
canary's release) is regenerated exactly as before (so are inputs computed otherwise on this
machine's CPU path than on the lock's canonical one, ``kit.tiers.unit.canonical_digests``: the
same inputs up to their last bits, made again here), so the verdict is the one the standard's
inputs give: the worker's process runs vendor code, and a vendor never chooses the inputs it is
judged on.

Measured (issue 37): sending a copy of the inputs as made before the call costs the worker
more (a copy, a file twice the size for a ``scale`` test) than the judge saves; the inputs
after the call cost nothing more to send.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kit.standard import Standard
from kit.tiers.unit.cases import repeating
from kit.tiers.unit.checking import UnitCase
from kit.tiers.unit.config import UnitConfig, load_unit_config
from kit.tiers.unit.identity import case_digest
from kit.tiers.unit.opinfo_cases import parse_opinfo_id
from kit.tiers.unit.release_drift import foreign_release
from kit.tiers.unit.samples import arguments_case
from kit.tiers.unit.unit_id import OPINFO_PREFIXES
from kit.tiers.unit.unit_id import TIER as UNIT
from kit.tiers.unit.variants.interface import VariantKind, rule_of_segment
from kit.tiers.unit.variants.registry import kind_named


def judged_case(standard: Standard, test_id: str, inputs: Any) -> UnitCase | None:
    """``test_id``'s case, repeating where the standard says so, built on the evidence's
    ``inputs`` where they are the standard's (``taken_case``); None: rebuild it."""
    config = load_unit_config(standard)
    taken = taken_case(standard, config, test_id, inputs)
    return None if taken is None else repeating(standard, config, test_id, taken)


def _exact_layout(config: UnitConfig, test_id: str) -> bool | None:
    """How the case places its inputs (``sample_case``'s ``exact_layout``) where it is the op
    called on them: False for an OpInfo position, True for a variant of a kind that keeps
    ``VariantKind.case``; None for a kind with a case of its own (its inputs are no sample)."""
    parsed = parse_opinfo_id(test_id)
    if isinstance(parsed.sample, int):
        return False
    entry = config.op(parsed.op_key, parsed.source)
    rule = rule_of_segment(parsed.sample, config.variants_of(entry, parsed.dtype))
    if rule is None:
        return None
    # A kind overriding ``case`` (a method call, an out= tensor, a conversion) builds its
    # inputs otherwise: only the kinds that keep the default are built from inputs.
    return True if type(kind_named(rule.kind)).case is VariantKind.case else None


def case_on_inputs(config: UnitConfig, test_id: str, inputs: Any) -> UnitCase | None:
    """``test_id``'s case over ``inputs`` (as ``make_inputs("cpu", False)`` gives them),
    without generating the op's samples; None where it is not built that way."""
    if not test_id.startswith(OPINFO_PREFIXES):
        return None
    exact_layout = _exact_layout(config, test_id)
    if exact_layout is None:
        return None
    parsed = parse_opinfo_id(test_id)
    entry = config.op(parsed.op_key, parsed.source)
    if parsed.dtype not in entry.dtypes:
        return None
    return arguments_case(entry, parsed.dtype, inputs, f"{entry.key} sample {parsed.sample}",
                          exact_layout=exact_layout)


def taken_case(standard: Standard, config: UnitConfig, test_id: str, inputs: Any
               ) -> UnitCase | None:
    """The case over the evidence's ``inputs`` where their digest is the one the standard
    locked for ``test_id`` on its own release; None (regenerate) otherwise."""
    if foreign_release(standard) is not None:
        return None
    locked = _locked_digest(standard, test_id)
    if locked is None:
        return None
    try:
        case = case_on_inputs(config, test_id, inputs)
        # The digest of what the case would hand the reference, as the lock computed it: it
        # covers dtypes, shapes, strides and values, not storage offsets or the memory between
        # elements, which no call of a case built here reads.
        taken = case is not None and case_digest(case) == locked
    except Exception:  # noqa: BLE001 - a tree no case is built from: regenerate
        return None
    return case if taken else None


#: The locked digests by list file, modification time and size: the judge asks for every test,
#: and reading the list again (14,000 lines) costs about a millisecond each time.
_LOCKED: dict[tuple[Path, int, int], Mapping[str, str]] = {}


def _locked_digest(standard: Standard, test_id: str) -> str | None:
    """``standard.input_digests("unit")[test_id]``, the list read once while it is unchanged."""
    if UNIT not in standard.test_lists:
        return None
    path = standard.test_list_path(UNIT)
    try:
        info = path.stat()
    except OSError:
        return None
    key = (path, info.st_mtime_ns, info.st_size)
    if key not in _LOCKED:
        _LOCKED.clear()
        _LOCKED[key] = standard.input_digests(UNIT)
    return _LOCKED[key].get(test_id)
