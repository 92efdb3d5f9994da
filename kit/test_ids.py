"""Test ids, parsed once: ``unit/opinfo/add/float32/0`` is the tier ``unit`` and the segments
``opinfo, add, float32, 0``; ``models/hf/llama/eager``, ``flows/<flow>/...`` and
``deploy/<check>`` likewise.

``TestId.split`` checks only the form (no empty segment, no whitespace, a tier and at least one
segment after it); ``TestId.parse`` also wants a known tier. The known tiers are the caller's to
give, since the registry's tiers import this module: ``kit.tiers.registry.parse_test_id`` gives
every registered tier, a tier its own name. What the segments after the tier mean (an OpInfo
op, dtype and sample) is each tier's to read.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from kit.errors import InputError

SEPARATOR = "/"
_WHITESPACE = re.compile(r"\s")


@dataclass(frozen=True)
class TestId:
    """A test id: its tier and the segments after it; ``str()`` gives the id back."""

    __test__ = False  # not a pytest test class

    tier: str
    segments: tuple[str, ...]

    @classmethod
    def split(cls, text: str) -> TestId:
        """``text`` split into its tier and segments; ``InputError`` when it is no id's form."""
        if not isinstance(text, str) or not text:
            raise InputError(f"test id {text!r}: expected a non-empty id such as unit/opinfo/add")
        # A report's ids are read by every summary, file and check of it: split each once.
        return _split(text)

    @classmethod
    def _checked_split(cls, text: str) -> TestId:
        """``split``'s checks, on a non-empty string."""
        if _WHITESPACE.search(text):
            raise InputError(f"test id {text!r}: holds whitespace")
        tier, *segments = text.split(SEPARATOR)
        if not segments:
            raise InputError(f"test id {text!r}: names a tier and nothing in it")
        for position, segment in enumerate((tier, *segments)):
            if not segment:
                raise InputError(f"test id {text!r}: segment {position} is empty")
        return cls(tier, tuple(segments))

    @classmethod
    def parse(cls, text: str, tiers: Collection[str]) -> TestId:
        """``split``, and its tier one of ``tiers``; ``InputError`` naming them when not."""
        parsed = cls.split(text)
        if parsed.tier not in tiers:
            raise InputError(
                f"test id {text!r}: unknown tier {parsed.tier!r} (tiers: {', '.join(tiers)})"
            )
        return parsed

    @classmethod
    def read(cls, text: str, tiers: Collection[str]) -> TestId | None:
        """``parse``, or None: for ids a report or run holds that may be of no known tier."""
        try:
            return cls.parse(text, tiers)
        except InputError:
            return None

    def __str__(self) -> str:
        return SEPARATOR.join((self.tier, *self.segments))

    def prefix(self, count: int) -> str:
        """The id up to ``count`` segments after the tier (``unit/opinfo/add`` for 2)."""
        return SEPARATOR.join((self.tier, *self.segments[:count]))

    @property
    def last(self) -> str:
        """The last segment (``0`` of ``unit/opinfo/add/float32/0``)."""
        return self.segments[-1]

    @property
    def parent(self) -> str:
        """The id without its last segment (``models/hf/llama`` of ``models/hf/llama/train``)."""
        return self.prefix(len(self.segments) - 1)


def tier_of(text: str) -> str:
    """The tier a test id (or a pattern of them) starts with, without checking the rest:
    ``unit/opinfo/add/float32/0`` -> ``unit``; for records and patterns of any form."""
    return text.partition(SEPARATOR)[0]


def tiers_with_tests(tiers: Iterable[str], test_ids: Iterable[str]) -> tuple[str, ...]:
    """Those of ``tiers`` that ``test_ids`` has a test of, in the order of ``tiers``."""
    present = {tier_of(test_id) for test_id in test_ids}
    return tuple(tier for tier in tiers if tier in present)


@functools.lru_cache(maxsize=1 << 16)
def _split(text: str) -> TestId:
    """``TestId.split`` of a string, kept: a ``TestId`` is immutable, and a failed split raises
    (not kept) every time."""
    return TestId._checked_split(text)
