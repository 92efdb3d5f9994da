"""Skip manifests and the standard's skip policy.

Policy (from the standard): an unexpired entry skips the tests it matches; an expired entry
skips nothing and counts as a failure; an entry that matches no collected test is stale; a
matched test the standard marks never-skip is a policy violation (no "conformant" grade).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit.errors import InputError
from kit.hashing import sha256_file
from kit.patterns import matches
from kit.vendors.validation import validate
from kit.yamlio import load_yaml

#: Every skip-manifest reason starts with this, so a skip can be told from "not applicable".
SKIP_PREFIX = "skip manifest: "


@dataclass(frozen=True)
class SkipEntry:
    test: str
    reason: str
    tracking: str
    expires: dt.date
    note: str = ""

    def describe(self) -> str:
        """The reason a skipped test shows, in pytest and in the report alike."""
        return f"{SKIP_PREFIX}{self.reason} ({self.tracking}, expires {self.expires})"

    def is_expired(self, today: dt.date) -> bool:
        return today > self.expires

    def to_json(self) -> dict[str, Any]:
        return {
            "test": self.test,
            "reason": self.reason,
            "tracking": self.tracking,
            "expires": self.expires.isoformat(),
            "note": self.note,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SkipEntry:
        """An entry as a report recorded it (``to_json``), to grade the report again."""
        return cls(
            test=str(data["test"]),
            reason=str(data["reason"]),
            tracking=str(data["tracking"]),
            expires=dt.date.fromisoformat(data["expires"]),
            note=str(data.get("note", "")),
        )


@dataclass(frozen=True)
class SkipDecision:
    """What the manifest says about one test id."""

    entry: SkipEntry | None
    skip: bool
    expired: bool

    @property
    def details(self) -> dict[str, Any]:
        if self.entry is None:
            return {}
        return {"skip": {**self.entry.to_json(), "expired": self.expired}}


NO_SKIP = SkipDecision(entry=None, skip=False, expired=False)


@dataclass(frozen=True)
class SkipManifest:
    entries: tuple[SkipEntry, ...]
    source: Path | None = None
    sha256: str = ""

    def decide(self, test_id: str, today: dt.date) -> SkipDecision:
        """The first matching entry wins, as in the file's order."""
        for entry in self.entries:
            if matches(test_id, entry.test):
                expired = entry.is_expired(today)
                return SkipDecision(entry=entry, skip=not expired, expired=expired)
        return NO_SKIP

    def stale_entries(self, test_ids: Iterable[str]) -> list[SkipEntry]:
        ids = list(test_ids)
        return [e for e in self.entries if not any(matches(t, e.test) for t in ids)]

    def expired_entries(self, today: dt.date) -> list[SkipEntry]:
        return [e for e in self.entries if e.is_expired(today)]


def _parse_date(value: str, source: Path, index: int) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise InputError(
            f"{source}: field skips.{index}.expires: expected a real date YYYY-MM-DD, got {value!r}"
        ) from None


def load_skip_manifest(source: Path) -> SkipManifest:
    data = load_yaml(source)
    if data is None:
        data = {"skips": []}
    # YAML reads an unquoted 2027-01-31 as a date; the schema speaks strings.
    for item in data.get("skips", []) if isinstance(data, dict) else []:
        if isinstance(item, dict) and isinstance(item.get("expires"), dt.date):
            item["expires"] = item["expires"].isoformat()
    validate(data, "skips.schema.json", source)
    entries = tuple(
        SkipEntry(
            test=item["test"],
            reason=item["reason"],
            tracking=item["tracking"],
            expires=_parse_date(item["expires"], source, index),
            note=item.get("note", ""),
        )
        for index, item in enumerate(data["skips"])
    )
    return SkipManifest(entries=entries, source=source, sha256=sha256_file(source))
