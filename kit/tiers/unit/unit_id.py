"""A unit test id's segments by name: ``unit/<source>/<op>/<dtype>/<sample>`` (light: no torch).

``kit.test_ids.TestId`` splits an id once; this is the unit tier's reading of the segments
after the tier, for every module that needs its op, dtype or last segment.
"""

from __future__ import annotations

from dataclasses import dataclass

from kit.errors import InputError
from kit.test_ids import TestId

TIER = "unit"
#: The id sources of OpInfo tests: the unit list's ops, and the sweep of every other OpInfo of
#: the release (``kit.tiers.unit.sweep``).
OPINFO_SOURCE = "opinfo"
SWEEP_SOURCE = "sweep"
OPINFO_PREFIXES = tuple(f"{TIER}/{source}/" for source in (OPINFO_SOURCE, SWEEP_SOURCE))


@dataclass(frozen=True)
class UnitId:
    """``unit/opinfo/add/float32/0``: source ``opinfo``, op ``add``, dtype ``float32``, sample
    ``0`` (a sample's index, or a variant's label: ``autocast-bfloat16``, ``scale-2p24``)."""

    source: str
    op: str
    dtype: str
    sample: str

    @classmethod
    def of(cls, test_id: str) -> UnitId:
        """``test_id`` read; ``InputError`` when it is no unit id."""
        parsed = TestId.parse(test_id, (TIER,))
        if len(parsed.segments) != 4:
            raise InputError(f"test id {test_id!r}: a unit id names a source, an op, a dtype "
                             "and a sample")
        source, op, dtype, sample = parsed.segments
        return cls(source, op, dtype, sample)

    @classmethod
    def read(cls, text: str) -> UnitId | None:
        """``of``, or None: for ids a report holds, which may be of any form."""
        try:
            return cls.of(text)
        except InputError:
            return None

    def variant(self) -> tuple[str, str]:
        """The sample's variant rule and label (``autocast``, ``bfloat16``); the rule alone is
        the whole sample where it holds no ``-`` (``0``, ``inplace``), the label then empty."""
        rule, _, label = self.sample.partition("-")
        return rule, label
